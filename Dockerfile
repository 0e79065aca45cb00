# raygate image: the webhook, the gate controller and the certificate tool.
# (Not built in this repository's CI, which has no container engine.)
FROM debian:bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config gcc libc6-dev \
      libh2o-evloop-dev libssl-dev libjansson-dev libcurl4-openssl-dev libyaml-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN meson setup /build -Dtests=false -Dbuildtype=release && meson compile -C /build

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libh2o-evloop0.13 libssl3 libjansson4 libcurl4 libyaml-0-2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/webhook/raygate-webhook /build/gate/raygate-gate /build/certs/raygate-certs /usr/bin/
USER 65532:65532
ENTRYPOINT ["/usr/bin/raygate-webhook"]
