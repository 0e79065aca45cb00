#!/usr/bin/env bash
# Builds raygate's OCI image on this machine, pulling nothing from any
# registry and needing no container engine: the root file system from
# hack/image-rootfs.sh (the four programs and their shared libraries, exactly
# what the Dockerfile's build stage makes), the configuration from the
# Dockerfile's final stage, assembled with Debian's umoci.
#
#   hack/image.sh [--tag NAME:TAG]     (default raygate.local/raygate:dev)
#
# Writes build-image/oci (an OCI image layout) and build-image/raygate.oci.tar
# (the same as an archive: `ctr images import`, `skopeo copy oci-archive:`,
# `podman load`), and prints the image's size.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$here/.." && pwd)"
ref=raygate.local/raygate:dev
while (($#)); do
	case "$1" in
	--tag) ref="${2:?--tag takes NAME:TAG}"; shift 2 ;;
	--tag=*) ref="${1#*=}"; shift ;;
	*) echo "usage: hack/image.sh [--tag NAME:TAG]" >&2; exit 2 ;;
	esac
done
[[ "$ref" =~ ^[a-z0-9./_-]+:[A-Za-z0-9_.-]+$ ]] || { echo "image.sh: --tag wants NAME:TAG, not '$ref'" >&2; exit 2; }
tag="${ref##*:}"
out="${RAYGATE_IMAGE_DIR:-$ROOT/build-image}"
command -v umoci >/dev/null || { echo "image.sh: umoci not found (hack/deps.sh installs it)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "image.sh: run as root (the image's files are root-owned; umoci keeps owners)" >&2; exit 1; }

# The final stage of the Dockerfile, as umoci config arguments (NUL-separated).
config_args() {
	python3 - "$ROOT/Dockerfile" <<-'PY'
		import json, shlex, sys
		text = open(sys.argv[1]).read().replace("\\\n", " ")
		lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
		last = max(i for i, l in enumerate(lines) if l.upper().startswith("FROM "))
		if lines[last].split()[1] != "scratch":
		    sys.exit("Dockerfile: the final stage must start FROM scratch")
		args, copied = [], False
		for l in lines[last + 1:]:
		    op, _, rest = l.partition(" ")
		    op = op.upper()
		    if op == "COPY":
		        if rest.split() != ["--from=build", "/rootfs", "/"]:
		            sys.exit("Dockerfile: the final stage may only COPY --from=build /rootfs /, not: " + rest)
		        copied = True
		    elif op in ("LABEL", "ENV"):
		        for kv in shlex.split(rest):
		            k, eq, v = kv.partition("=")
		            if not eq:
		                sys.exit("Dockerfile: %s needs KEY=VALUE: %s" % (op, kv))
		            args += ["--config.label" if op == "LABEL" else "--config.env", "%s=%s" % (k, v)]
		    elif op == "USER":
		        args += ["--config.user", rest]
		    elif op == "WORKDIR":
		        args += ["--config.workingdir", rest]
		    elif op in ("ENTRYPOINT", "CMD"):
		        words = json.loads(rest)
		        args += ["--clear=config.%s" % op.lower()]
		        for w in words:
		            args += ["--config.%s" % op.lower(), w]
		    else:
		        sys.exit("Dockerfile: hack/image.sh does not know %s in the final stage" % op)
		if not copied:
		    sys.exit("Dockerfile: the final stage does not COPY the rootfs")
		sys.stdout.write("".join(a + "\0" for a in args))
	PY
}
mapfile -d '' -t cfg < <(config_args)
((${#cfg[@]})) || { echo "image.sh: could not read the Dockerfile's final stage" >&2; exit 1; }

export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}"
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
mkdir -p "$out"
bash "$here/image-rootfs.sh" "$ROOT" "$out/build" "$out/rootfs"

rm -rf "$out/oci" "$out/bundle"
umoci init --layout "$out/oci"
umoci new --image "$out/oci:$tag"
umoci unpack --image "$out/oci:$tag" "$out/bundle" >/dev/null
cp -a "$out/rootfs/." "$out/bundle/rootfs/"
umoci repack --image "$out/oci:$tag" --history.created "$created" \
	--history.created_by "hack/image-rootfs.sh (the Dockerfile's build stage)" "$out/bundle"
umoci config --image "$out/oci:$tag" --os linux --architecture amd64 --created "$created" \
	--history.created "$created" --history.created_by "the Dockerfile's final stage" "${cfg[@]}"
umoci gc --layout "$out/oci"
rm -rf "$out/bundle"
# The full name, as containerd and skopeo read it from an OCI layout's index.
python3 - "$out/oci/index.json" "$ref" <<-'PY'
	import json, sys
	path, ref = sys.argv[1:]
	index = json.load(open(path))
	for m in index["manifests"]:
	    m.setdefault("annotations", {})["io.containerd.image.name"] = ref
	json.dump(index, open(path, "w"))
PY
tar -C "$out/oci" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-cf "$out/raygate.oci.tar" .

# Size: the compressed layer and config as a registry would store them, and
# the unpacked root file system.
python3 - "$out/oci" "$out/rootfs" "$ref" <<-'PY'
	import json, os, sys
	oci, rootfs, ref = sys.argv[1:]
	def blob(d):
	    return os.path.join(oci, "blobs", *d["digest"].split(":"))
	index = json.load(open(os.path.join(oci, "index.json")))
	manifest = json.load(open(blob(index["manifests"][0])))
	compressed = sum(l["size"] for l in manifest["layers"]) + manifest["config"]["size"]
	unpacked = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(rootfs) for f in fs)
	files = sum(len(fs) for _, _, fs in os.walk(rootfs))
	print("image %s (%s): %d files, %.1f MiB unpacked, %.1f MiB compressed (%d bytes)" % (
	    ref, index["manifests"][0]["digest"][:19], files, unpacked / 2**20, compressed / 2**20, compressed))
PY
