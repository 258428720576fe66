"""Remote fact gathering: one shell script per site per call, and pure parsers of what
it prints (tagged lines ``@@tag value``), so a site costs one SSH round trip."""
