# raygate's image: the webhook, the gate controller and the certificate tool,
# their shared libraries and nothing else (no shell), run as uid 65532 on a
# read-only root file system.
#
# One description for both builds: the build stage runs hack/image-rootfs.sh,
# which hack/image.sh also runs on a Debian 12 host; hack/image.sh then reads
# the final stage below (COPY of the rootfs, USER, ENTRYPOINT, LABEL, ENV) and
# assembles the same image with umoci, without a container engine or registry.
#   docker build -t ghcr.io/raygate/raygate:0.1.0 .
FROM debian:bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config gcc libc6-dev \
      libh2o-evloop-dev libssl-dev libjansson-dev libcurl4-openssl-dev libyaml-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN hack/image-rootfs.sh /src /build /rootfs

FROM scratch
COPY --from=build /rootfs /
LABEL org.opencontainers.image.title="raygate" \
      org.opencontainers.image.description="Gang admission for Ray on Kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/raygate/raygate"
USER 65532:65532
ENTRYPOINT ["/usr/bin/raygate-webhook"]
