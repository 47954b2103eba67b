from .classic_text.style import hint


async def process(ctx):
    visits = ctx.state.session.get("classic.visits", 0) + 1
    ctx.state.session.set("classic.visits", visits)
    ctx.state.session.append("classic.inputs", ctx.input.raw_text)
    ctx.input.add_context(hint(visits))
    ctx.input.progress(f"visit {visits}: {', '.join(ctx.state.session.get('classic.inputs'))}")
