# matte's image (docs/deploy.md, "The image"): the server on Debian 12 slim with Node 20 and the
# system libvips 8.14, the default model baked in, run as a non-root user.
#   docker build -t matte .                                  (linux/amd64)
#   docker buildx build --platform linux/arm64 -t matte .    (the arm64 platform package, cross-built)
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp -v matte-state:/var/lib/matte matte
# Three stages: `build` makes the tarballs exactly as `npm run pack` does, on the build machine's own
# platform (the arm64 addon is cross-compiled there, as the repository does); `install` installs them
# as a user does, with npm and no compiler; the runtime stage copies that application, Node's binary
# and nothing else onto Debian slim with libvips42: no compiler, no -dev package, no npm, no tests.
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim
ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim

# Node's binary for the image's platform.
FROM ${NODE_IMAGE} AS node

FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS build
ARG TARGETARCH
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ make cmake pkg-config patchelf \
      libvips-dev libheif-dev zlib1g-dev libdeflate-dev libwebp-dev libimagequant-dev libcgif-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
COPY . .
COPY --from=node /usr/local/bin/node /node/node
# The model is fetched here, where an addon that runs on this machine is built (the fetcher
# verifies the file through the library), and only its files go on. Node's binary is stripped of
# its symbol table (12 MB; what addons link against stays).
RUN npx --no-install cmake-js compile --out build --target matte --log-level error \
 && if [ "$TARGETARCH" = arm64 ]; then sh scripts/setup-arm64.sh && aarch64-linux-gnu-strip /node/node; else strip /node/node; fi \
 && npx --no-install tsc -p tsconfig.json \
 && node scripts/pack.mjs --no-build --out /pack \
 && node scripts/image-package.mjs /pack "$TARGETARCH" >/pack/package.json \
 && MATTE_MODELS_DIR=/models node dist/models/fetch.js --quiet u2netp

FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS install
WORKDIR /opt/matte
COPY --from=build /pack/ /pack/
RUN cp /pack/package.json . \
 && npm install --omit=dev --omit=peer --no-audit --no-fund --no-update-notifier --loglevel=error \
      --os=linux --cpu="$(node -p 'require("/pack/package.json").config.cpu')" \
 && rm -rf /pack package-lock.json
COPY --from=build /models/ /opt/matte/models/

FROM ${DEBIAN_IMAGE}
# The package.json names no repository: SOURCE is the package's public page unless the builder
# passes the repository it builds from (--build-arg SOURCE=...).
ARG VERSION=0.1.0
ARG SOURCE=https://www.npmjs.com/package/matte
LABEL org.opencontainers.image.title="matte" \
      org.opencontainers.image.description="Self-hosted image editing and AI background removal: libvips and ONNX Runtime in one native call per request" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.matte.model="u2netp (Apache-2.0)"
# libvips42 is Debian 12's libvips 8.14 with every library the addon links; tini is PID 1: it
# passes SIGTERM on to Node and reaps what exits.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libvips42 tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/cache/debconf/*-old \
 && groupadd --system --gid 10001 matte \
 && useradd --system --uid 10001 --gid matte --home-dir /var/lib/matte --no-create-home --shell /usr/sbin/nologin matte \
 && install -d -o matte -g matte -m 0700 /var/lib/matte /var/lib/matte/results
COPY --from=build /node/node /usr/local/bin/node
COPY --from=install /opt/matte/ /opt/matte/
# The documented settings for a container: every address, results on the volume at /var/lib/matte
# (their directory must be matte's own and 0700: docs/configuration.md), the baked model read-only.
# /metrics (no key) stays on the container's loopback unless the operator opens it: with
# MATTE_METRICS_ADDRESS=0.0.0.0:9464 for a scraper on a network of its own (the Kubernetes
# manifests do), or with MATTE_METRICS_KEY on the public port.
ENV NODE_ENV=production \
    PATH=/opt/matte/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOST=0.0.0.0 \
    PORT=8080 \
    MATTE_RESULTS_DIR=/var/lib/matte/results \
    MATTE_MODELS_DIR=/opt/matte/models \
    MATTE_METRICS_ADDRESS=127.0.0.1:9464
USER 10001:10001
WORKDIR /var/lib/matte
EXPOSE 8080 9464
# Ready, not only alive: the model is loaded and the result store takes writes (GET /readyz).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "/opt/matte/node_modules/matte/dist/server/main.js"]
