"""The endpoint's routes and what they share: the ASGI app, its sessions and streams, metrics and a runner.

- :mod:`~kokoro_endpoint.serving.app`: ``create_app``, the Leg 1 ASGI app;
- :mod:`~kokoro_endpoint.serving.ws_session`: one Leg 1 WebSocket session;
- :mod:`~kokoro_endpoint.serving.invocations` and :mod:`~kokoro_endpoint.serving.openai_api`: the HTTP routes;
- :mod:`~kokoro_endpoint.serving.synthesis_job`: one client message to a validated job;
- :mod:`~kokoro_endpoint.serving.metrics`: the CloudWatch metrics;
- :mod:`~kokoro_endpoint.serving.runner`: the app on uvicorn in a background thread.
"""
