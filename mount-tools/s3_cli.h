// Shared plumbing of the `bucketfs s3` subcommands (s3_command.cc dispatches;
// s3_ls.cc, s3_transfer.cc, s3_rm.cc, s3_bench.cc each add one or two
// subcommands to the CLI11 app).
//
// Each Add*Command registers its subcommand and its flags and returns a
// runner; the dispatcher runs the runner of the subcommand the user chose.
// The client is built only then, from the common flags, so `--help` needs no
// credentials. Errors are printed as one line:
//   bucketfs s3 get: s3://b/k: NoSuchKey (HTTP 404): ...
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "s3/client_config.h"
#include "s3/object_client.h"
#include "s3/result.h"

namespace CLI {
class App;
}

namespace bucketfs::tools {

// Flags every subcommand accepts (before or after the subcommand name).
struct S3CommonOptions {
  s3::ClientConfigOverrides overrides;
  int connections = 16;  // requests in flight
  std::string log_level = "warn";
  bool no_progress = false;
};

// What a subcommand needs at run time.
class S3Context {
 public:
  explicit S3Context(const S3CommonOptions& options) : options_(options) {}
  const S3CommonOptions& options() const { return options_; }
  // Builds the client on first use. `extra_connections` multiplies the
  // connection pool (bench with several objects in parallel).
  Result<s3::ObjectClient*> Client(int connection_multiplier = 1);

 private:
  const S3CommonOptions& options_;
  std::unique_ptr<s3::ObjectClient> client_;
};

using S3Runner = std::function<int(S3Context&)>;

struct S3Subcommand {
  CLI::App* app;
  S3Runner run;
};

// Registration, one per file.
std::vector<S3Subcommand> AddLsCommands(CLI::App& s3);        // ls, mb
std::vector<S3Subcommand> AddTransferCommands(CLI::App& s3);  // get, put
std::vector<S3Subcommand> AddRmCommands(CLI::App& s3);        // rm
std::vector<S3Subcommand> AddBenchCommands(CLI::App& s3);     // bench get|put|get-random|list
S3Subcommand AddBenchListCommand(CLI::App& bench);            // bench list (s3_bench_list.cc)

// Prints "bucketfs s3 <cmd>: <target>: <error>" to stderr and returns 1.
int ReportError(std::string_view command, std::string_view target, const Error& error);

}  // namespace bucketfs::tools
