"""What setup makes each site hold: resources, links and units, for the podman sites and
the cluster; and drift, how a site differs from it. Pure."""
