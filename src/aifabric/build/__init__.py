"""From plan to build: cable plan, port maps, rack layout, expected neighbours, scheduler topology
(:func:`aifabric.build.artefacts.write_build`), and the cabled fabric checked against the plan
(:func:`aifabric.build.verify.verify_build`)."""
