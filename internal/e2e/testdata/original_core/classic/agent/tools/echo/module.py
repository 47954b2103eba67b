from demiurge.sdk import ToolResult

from .classic_text.style import shout


def execute(ctx, args):
    return ToolResult(content=shout(args["text"]), data={"length": len(args["text"])})
