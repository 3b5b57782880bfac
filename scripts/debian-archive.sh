# Sourced by scripts/image and scripts/librdkafka (not run): where this machine's apt sources
# find Debian, so that no mirror's host name is written in the repository.

# The URI of the Debian archive labelled $1 (Debian, Debian-Security) among the machine's apt
# sources, by what their Release files say (apt-get indextargets), without the trailing slash;
# nothing when apt knows none (no such source, or apt-get update never ran).
debian_archive_uri() {
	apt-get indextargets --format '$(ORIGIN)|$(LABEL)|$(IDENTIFIER)|$(REPO_URI)' 2>/dev/null |
		awk -F'|' -v l="$1" '$1 == "Debian" && $2 == l && $3 == "Packages" { sub("/$", "", $4); print $4; exit }'
}
