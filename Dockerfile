# source-tracer gRPC service. Build: docker build -t source-tracer .
# Run:   docker run --rm -p 50051:50051 -p 9464:9464 source-tracer
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    SOURCE_TRACER_PROMPTS_DIR=/app/prompts

WORKDIR /app
COPY pyproject.toml README.md constraints.txt ./
COPY tracer ./tracer
COPY server ./server
COPY proto ./proto
COPY prompts ./prompts
RUN pip install -c constraints.txt . \
    && useradd --system --uid 10001 --no-create-home tracer

USER 10001
EXPOSE 50051 9464
# Inside a container the service must listen on all interfaces; auth/TLS via env or flags
# (SOURCE_TRACER_AUTH_TOKEN, --tls-cert/--tls-key/--tls-ca). SIGTERM drains (grace 30 s).
ENTRYPOINT ["source-tracer", "serve"]
CMD ["--host", "0.0.0.0", "--port", "50051", "--metrics-port", "9464"]
