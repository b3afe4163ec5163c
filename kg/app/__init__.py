"""The application: everything a user runs, built on the core below it.

``client`` (the Python client), ``cli`` (the ``strata`` command), ``rest`` (the REST API and its web page),
``mcp`` (the MCP server for agents), ``demo``, ``bench`` (benchmarks) and ``evaluation`` (QA and retrieval
evaluation). Nothing under ``kg`` outside this package imports it.
"""
