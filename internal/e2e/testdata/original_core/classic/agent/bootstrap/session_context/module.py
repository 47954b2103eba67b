def process(ctx):
    ctx.bootstrap.add(
        "Session environment\n"
        f"- workspace: {ctx.workspace}\n"
        f"- session: {ctx.session_id}"
    )
