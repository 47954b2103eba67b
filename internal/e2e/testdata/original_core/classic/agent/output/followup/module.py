from demiurge.sdk import AgentSpawnHandle


def process(ctx):
    handle = ctx.agents.spawn("evolver", "note this answer: " + ctx.output.response_text, tools="none")
    ctx.output.notice(f"followup {handle.status} on {handle.core_id}: {handle.task_id}")
