#!/bin/sh
# Collects the runtime image's whole file system under $1, for docker/Dockerfile's last stage
# (FROM scratch): the binary, the shared libraries it loads (its ldd closure, resolved on the
# Debian 13 stage that has their packages installed), the CA bundle, the user and group outboxd
# runs as, and one dpkg record per package those files come from. Nothing else: no shell, no
# package manager, no coreutils. The dpkg records (var/lib/dpkg/status.d/, the layout Google's
# distroless images use) let image scanners (trivy, grype) see which Debian packages and versions
# the libraries are, so their security fixes are found; librdkafka, linked statically, has a
# record of its own.
#
#   docker/rootfs.sh OUT BINARY
set -eu

out=$1
bin=$2

mkdir -p "$out/usr/local/bin" "$out/usr/lib" "$out/usr/lib64" "$out/etc/ssl/certs" \
	"$out/var/lib/dpkg/status.d" "$out/tmp"
# merged /usr, as on Debian: the loader is asked for /lib64/ld-linux-x86-64.so.2 and ldd names
# /lib/x86_64-linux-gnu/...
ln -s usr/lib "$out/lib"
ln -s usr/lib64 "$out/lib64"
chmod 1777 "$out/tmp"
install -m 0755 "$bin" "$out/usr/local/bin/outboxd"

# The ldd closure. ldd lists every library loaded at start-up (the dependencies of the
# dependencies too); nothing outboxd uses is dlopen()ed later: glibc 2.34 and later have the
# files and dns NSS modules built in, librdkafka's SASL PLAIN/SCRAM/OAUTHBEARER are its own code
# (Cyrus SASL plugins would be needed for GSSAPI only), and OpenSSL 3's default provider is
# built in.
libs=$(ldd "$bin" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | sort -u)
for l in $libs; do
	real=$(readlink -f "$l")
	case $real in
	/usr/*) dest=$real ;;
	*) dest=/usr$real ;;
	esac
	mkdir -p "$out$(dirname "$dest")"
	cp "$real" "$out$dest"
	# the name the loader asks for (libpq.so.5 -> libpq.so.5.17, /lib64/ld-linux-x86-64.so.2)
	if [ ! -e "$out$l" ]; then
		if [ "$(dirname "$out$l")" -ef "$(dirname "$out$dest")" ]; then
			ln -s "$(basename "$dest")" "$out$l"
		else
			ln -s "$dest" "$out$l"
		fi
	fi
	echo "$real"
done >"$out.files"

# Which packages those files are, recorded for scanners (one status paragraph each).
for f in $(cat "$out.files"); do
	dpkg-query -S "$f" 2>/dev/null || dpkg-query -S "${f#/usr}"
done | cut -d: -f1 | sort -u >"$out.pkgs"
echo ca-certificates >>"$out.pkgs"
for p in $(sort -u "$out.pkgs"); do
	dpkg-query -s "$p" >"$out/var/lib/dpkg/status.d/$p"
done

# librdkafka is linked in (meson -Drdkafka=pinned), so no file of the closure is it and no
# Debian package is installed for it: its record says what it is, Debian's source package name
# and version (scanners match those against Debian's security tracker), taken from
# scripts/librdkafka, which built it; the binary must name the same version.
if ! ldd "$bin" | grep -q librdkafka; then
	pin=$(dirname "$0")/../scripts/librdkafka
	version=$("$pin" version)
	debian_version=$("$pin" debian-version)
	linked=$("$bin" version | awk '$1 == "librdkafka" { print $2 }')
	if [ "$linked" != "$version" ]; then
		echo "docker/rootfs.sh: $bin names librdkafka ${linked:-none}," \
			"not scripts/librdkafka's $version" >&2
		exit 1
	fi
	cat >"$out/var/lib/dpkg/status.d/librdkafka" <<-EOF
		Package: librdkafka
		Status: install ok installed
		Architecture: $(dpkg --print-architecture)
		Source: librdkafka
		Version: $debian_version
		Description: library implementing the Apache Kafka protocol, linked into outboxd
		 Not a Debian binary package: librdkafka $version, built from Debian's source package
		 librdkafka $debian_version (its upstream tarball, checked against a pinned sha256) by
		 outboxd's scripts/librdkafka and linked statically into /usr/local/bin/outboxd. No
		 librdkafka shared library is in this image.
	EOF
fi

# libpq and librdkafka verify servers against the system bundle (sslrootcert=system,
# ssl.ca.location's default probe paths).
cp /etc/ssl/certs/ca-certificates.crt "$out/etc/ssl/certs/"
ln -s certs/ca-certificates.crt "$out/etc/ssl/cert.pem"

# The user the image runs as, with a fixed numeric id (mounted secrets are owned by it).
printf 'root:x:0:0:root:/root:/sbin/nologin\noutboxd:x:10001:10001:outboxd:/nonexistent:/sbin/nologin\n' \
	>"$out/etc/passwd"
printf 'root:x:0:\noutboxd:x:10001:\n' >"$out/etc/group"
printf 'hosts: files dns\n' >"$out/etc/nsswitch.conf"

# The loader's cache of the copied libraries (their folders are the loader's defaults anyway).
cp -r /etc/ld.so.conf /etc/ld.so.conf.d "$out/etc/"
ldconfig -r "$out"

# The binary must start in this root and nothing else: prove it before the stage ends.
chroot "$out" /usr/local/bin/outboxd version >/dev/null
rm -f "$out.files" "$out.pkgs"
