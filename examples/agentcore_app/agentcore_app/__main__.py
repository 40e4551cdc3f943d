"""Run the voice app under uvicorn: ``python -m agentcore_app`` (what the container does).

Listens on ``HOST`` (default 0.0.0.0) and ``PORT`` (default 8080, the AgentCore Runtime contract);
the rest of the configuration comes from the environment (see :mod:`agentcore_app.config`).
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["main"]


def main() -> int:
    """Build the app from the environment and serve it until stopped."""
    import uvicorn
    from strands_voice_protocol.errors import StrandsVoiceError

    from .app import create_app
    from .call import MAX_FRAME_BYTES

    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO").upper())
    try:
        app = create_app()
    except StrandsVoiceError as error:
        print(f"agentcore_app: {error}", file=sys.stderr)
        return 2
    # BedrockAgentCoreApp logs through its own JSON handler; don't print each line twice via the root.
    logging.getLogger("bedrock_agentcore.app").propagate = False
    port = int(os.environ.get("PORT", "8080"))
    # A call's frames are bounded by the server itself, before the call's own checks (and before start).
    host = os.environ.get("HOST", "0.0.0.0")
    uvicorn.run(app, host=host, port=port, log_level="info", ws_max_size=MAX_FRAME_BYTES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
