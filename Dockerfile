# memgate gateway / worker image. Same image, different command.
FROM node:20-bookworm-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Dependencies first (their native builds included), without our own `prepare` build: the sources come next.
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild --no-audit --no-fund
COPY . .
RUN npm run build
ENV MEMGATE_PROFILE=production
EXPOSE 7700
CMD ["node", "bin/memgate.mjs", "serve"]
