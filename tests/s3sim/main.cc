// s3sim: a fast, strict in-memory S3 server for bucketfs benchmarks and fault
// tests. See tests/s3sim/options.cc (or --help) for the flags.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "tests/s3sim/body_pool.h"
#include "tests/s3sim/faults.h"
#include "tests/s3sim/http_server.h"
#include "tests/s3sim/options.h"
#include "tests/s3sim/preload.h"
#include "tests/s3sim/s3_app.h"
#include "tests/s3sim/stats.h"
#include "tests/s3sim/store.h"

int main(int argc, char** argv) {
  std::string message;
  int exit_code = 0;
  auto opts = s3sim::ParseOptions(argc, argv, &message, &exit_code);
  if (!opts) {
    (exit_code == 0 ? std::cout : std::cerr) << message;
    return exit_code;
  }
  // Signals are taken synchronously by the main thread (sigwait), so every
  // thread started below inherits the blocked mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  s3sim::BodyPool::Default().SetCapacity(opts->body_pool_bytes);
  s3sim::Store store(opts->min_part_size);
  for (const std::string& b : opts->buckets) store.CreateBucket(b);
  int threads = opts->threads > 0
                    ? opts->threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& spec : opts->preloads) {
    if (auto err = s3sim::Preload(store, spec, opts->faults.seed, threads)) {
      std::cerr << "s3sim: " << *err << "\n";
      return 1;
    }
  }
  s3sim::Stats stats;
  s3sim::FaultInjector faults(opts->faults);
  s3sim::S3App app(opts->auth, &store, &faults, &stats);
  s3sim::RateLimiter limiter(opts->rate_limit);
  if (limiter.enabled()) app.SetRateLimiter(&limiter);
  app.SetHostile(opts->hostile);
  s3sim::HttpServer server(opts->server, &app);
  if (auto err = server.Listen()) {
    std::cerr << "s3sim: " << *err << "\n";
    return 1;
  }
  if (!opts->port_file.empty()) {
    std::string tmp = opts->port_file + ".tmp";
    {
      std::ofstream f(tmp);
      f << server.port() << "\n";
    }
    std::rename(tmp.c_str(), opts->port_file.c_str());
  }
  std::cout << "s3sim listening on " << opts->server.host << ":" << server.port() << std::endl;

  std::thread acceptor([&] { server.Run(); });
  int sig = 0;
  sigwait(&sigs, &sig);
  server.Stop();
  acceptor.join();
  return 0;
}
