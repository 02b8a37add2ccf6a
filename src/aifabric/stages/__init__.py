"""The main job (``aifabric compare``) as a chain of stages; see ``pipeline``."""
