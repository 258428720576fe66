"""A sandbox router: a real process that stands in for skrouterd (docs/sandbox.md section 6).

It reads the ``skrouterd.json`` that emulated ``skupper`` renders, links to other routers
over mutual TLS, exchanges routing keys with them (distance vector) and carries TCP
streams from ``tcpListener`` ports, across one or more links, to ``tcpConnector`` targets.
"""
