"""Lambda sources deployed as CDK assets (standard library and boto3 only)."""

__all__: list[str] = []
