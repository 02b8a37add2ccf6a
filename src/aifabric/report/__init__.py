"""Outputs of the main job: the HTML report (``html``), terminal tables and the JSON evidence chain."""
