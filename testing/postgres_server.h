// PostgresServer: a real PostgreSQL 15 server for tests, in a fresh temporary
// directory, listening on 127.0.0.1 only (its unix socket is in that
// directory, never in /var/run).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<PostgresServer> server,
//                    PostgresServer::Start());
//   ASSIGN_OR_RETURN(std::string conninfo, server->CreateDatabase());
//   ... PostgresStore::Open({.conninfo = conninfo}) ...
//
// Start runs initdb (trust authentication, so any local connection is
// accepted) and `postgres` on a free port, and waits (bounded) until it
// accepts connections. fsync is on unless Options::fsync says otherwise.
// initdb's output is kept, once, in a template directory beside the servers'
// ($TMPDIR or /tmp, `chime-pg-template-<uid>-<hash>`) and copied by later
// servers, which then start in about half a second instead of two and a half;
// delete the template to force a fresh initdb.
//
// Root. initdb and postgres refuse to run as root; tests run as root in CI.
// When the effective uid is 0 both run as the `postgres` system user (created
// by Debian's postgresql package), which owns the directory; the directory is
// made under a parent that user can traverse ($TMPDIR, else /tmp).
//
// Cleanup. The destructor stops the server (fast shutdown, then SIGKILL if it
// has not exited after 30 s) and removes the directory. If the test process
// dies first, the server gets SIGQUIT (immediate shutdown) through
// PR_SET_PDEATHSIG -- which Linux sends when the *thread* that started it
// exits: start servers from a thread that lives as long as they do (the
// main thread, in a gtest binary). Every wait here is bounded.
//
// Thread-safety: none; one thread drives a server.
#ifndef CHIME_TESTING_POSTGRES_SERVER_H_
#define CHIME_TESTING_POSTGRES_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace chime::testing {

class PostgresServer {
 public:
  struct Options {
    std::string bin_dir = "/usr/lib/postgresql/15/bin";
    bool fsync = true;
    absl::Duration start_timeout = absl::Seconds(30);
  };

  // NotFound, saying to run scripts/install-deps.sh, if PostgreSQL is not
  // installed; Unavailable if initdb fails or the server does not accept
  // connections within start_timeout (the message has its log's tail).
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(Options options);
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start() {
    return Start(Options());
  }
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // libpq conninfo of database `dbname` (as the superuser `postgres`).
  std::string ConnInfo(absl::string_view dbname = "postgres") const;
  // The same as a URL: postgresql://postgres@127.0.0.1:<port>/<dbname>.
  std::string Url(absl::string_view dbname = "postgres") const;
  // Creates a new, empty database and returns its conninfo.
  absl::StatusOr<std::string> CreateDatabase();

  // Fast shutdown (SIGINT: active transactions are rolled back, a
  // checkpoint is written). OK if already stopped.
  absl::Status Stop();
  // Immediate shutdown (SIGQUIT, as `pg_ctl -m immediate`): like a crash;
  // the next start recovers from the WAL.
  absl::Status StopImmediately();
  // Starts the stopped server again on the same directory and port.
  absl::Status Restart();

  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  PostgresServer(Options options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}

  // Starts `postgres` on port_ (picking a free one if 0) and waits until it
  // accepts connections.
  absl::Status Launch();
  absl::Status StopWith(int signal);

  const Options options_;
  const std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  int databases_ = 0;
};

}  // namespace chime::testing

#endif  // CHIME_TESTING_POSTGRES_SERVER_H_
