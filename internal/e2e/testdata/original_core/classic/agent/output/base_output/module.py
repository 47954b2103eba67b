def process(ctx):
    ctx.output.send_text(ctx.output.response_text)
