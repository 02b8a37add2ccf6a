"""Design: fabric options → topology size, bill of materials, capex and power (``plan``, ``cost``)."""
