// ferry gateway: an S3 endpoint in front of a running migration
// (gateway/gateway.h) until interrupted. The job's stores are opened from
// its record in the shared --state, with the credentials the environment
// gives ferry for them; clients sign with the gateway's own keys
// (--credentials), never with those.

#include "cli/cli_util.h"
#include "cli/config_file.h"
#include "cli/gateway_serve.h"
#include "cli/registry.h"

namespace ferry::cli {
namespace {

int RunGateway(const GatewayArgs& a) {
  auto serving = StartGateway(a);
  if (!serving.ok()) return Fail("gateway", serving.status());
  (*serving)->ServeUntilInterrupted();
  return 130;
}

}  // namespace

void AddGatewayCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<GatewayArgs>();
  auto* g = app.add_subcommand(
      "gateway",
      "An S3 endpoint in front of a running migration: answers from the destination, copies on "
      "demand what the job has not copied yet, records writes so the job never overwrites them");
  g->add_option("--job", a->job, "The migration job to serve (its id)")->required();
  AddStateOption(g, &a->migrate);
  g->add_option("--listen", a->listen, "HOST:PORT to serve S3 on (port 0: pick one)")
      ->capture_default_str();
  g->add_option("--listen-tls", a->listen_tls, "HOST:PORT to serve HTTPS on, beside --listen");
  g->add_option("--tls-cert", a->tls_certs, "Certificate chain (PEM) for HTTPS; SIGHUP reloads");
  g->add_option("--tls-key", a->tls_keys,
                "The private key (PEM) of the --tls-cert in the same place");
  g->add_option("--port-file", a->port_file, "Write the bound --listen port here");
  g->add_option("--tls-port-file", a->tls_port_file, "Write the bound --listen-tls port here");
  g->add_option("--credentials", a->credentials,
                "File of the gateway's own access keys: \"ACCESS_KEY_ID SECRET\" per line");
  g->add_option("--bucket", a->bucket,
                "The bucket name clients use (default: the destination's bucket or directory)");
  g->add_option("--region", a->region, "The region clients sign for")->capture_default_str();
  g->add_option("--lease", a->lease_s,
                "Seconds an on-demand copy's claim lasts without a result (then the job takes "
                "the key back)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  g->add_option("--busy-wait", a->busy_wait_s,
                "Seconds a read waits for the job's copy of its key before reading the source "
                "as it is")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600.0));
  g->add_option(
       "--inline-limit", a->inline_limit,
       "Objects up to this size are copied on demand through memory, answered as they arrive; "
       "larger ones are copied store to store first")
      ->capture_default_str();
  g->add_option("--max-body", a->max_body, "Largest request body held whole (an XML request; an upload without a length or signed over its body's hash); uploads with a length stream through, up to 5 GiB")
      ->capture_default_str();
  g->add_option("--threads", a->threads, "Event loops")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  g->add_option("--workers", a->workers, "Threads for requests that wait on the stores")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  g->add_option("--client-timeout", a->client_timeout_s,
                "Seconds to wait for a request or for a client to take an answer")
      ->capture_default_str();
  g->add_option("--cors-origin", a->cors_origins,
                "A web origin (scheme://host[:port], or *) whose pages may call the gateway from a "
                "browser, e.g. to upload to a presigned URL; repeat for more (default: none)");
  g->add_option("--cors-max-age", a->cors_max_age_s,
                "Seconds a browser may keep a CORS preflight's answer")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  AddGlobalOptions(*g, &a->migrate.global);
  AddDaemonOptions(g, "gateway");
  g->callback([a, exit_code] { *exit_code = RunGateway(*a); });
}

}  // namespace ferry::cli
