#include "testing/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chime::testing {
namespace {

// Who runs initdb and postgres: ourselves, or (as root) the postgres user.
struct Identity {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

absl::StatusOr<Identity> ServerIdentity() {
  Identity id;
  if (::geteuid() != 0) return id;
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) {
    return absl::FailedPreconditionError(
        "running as root, PostgreSQL must run as the `postgres` system user, "
        "which does not exist: run scripts/install-deps.sh (package "
        "postgresql-15)");
  }
  id.drop = true;
  id.uid = pw->pw_uid;
  id.gid = pw->pw_gid;
  // Looked up before fork: the child may only make async-signal-safe calls.
  int n = 32;
  id.groups.resize(n);
  if (::getgrouplist("postgres", id.gid, id.groups.data(), &n) < 0) {
    id.groups.resize(n);
    ::getgrouplist("postgres", id.gid, id.groups.data(), &n);
  }
  id.groups.resize(n);
  return id;
}

// Forks and execs argv[0] as `id`, with stdout and stderr appended to
// `log_path`. The child gets SIGQUIT when this thread exits.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const Identity& id, const std::string& log_path) {
  const int log =
      ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open ", log_path, ": ", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    if (id.drop && (::setgroups(id.groups.size(), id.groups.data()) != 0 ||
                    ::setgid(id.gid) != 0 || ::setuid(id.uid) != 0)) {
      ::_exit(126);
    }
    // After setuid, which clears it.
    ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (::getppid() != parent) ::_exit(125);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log);
  return pid;
}

// Waits (bounded) for `pid` to exit; its wait status, or nullopt on timeout.
std::optional<int> WaitExit(pid_t pid, absl::Duration limit) {
  const absl::Time end = absl::Now() + limit;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;  // not our child any more
    if (absl::Now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string LogTail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return absl::UnavailableError("cannot bind a loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A parent for the server's directory that `id` can traverse.
std::string BaseDir(const Identity& id) {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path base = tmp != nullptr && *tmp ? tmp : "/tmp";
  if (!id.drop) return base.string();
  for (std::filesystem::path p = base; p != p.parent_path();
       p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) {
      return "/tmp";
    }
  }
  return base.string();
}

// Runs argv as `id` and waits (at most `limit`) for it to succeed.
absl::Status RunToCompletion(const std::vector<std::string>& argv,
                             const Identity& id, const std::string& log,
                             absl::Duration limit) {
  absl::StatusOr<pid_t> pid = Spawn(argv, id, log);
  if (!pid.ok()) return pid.status();
  const std::optional<int> status = WaitExit(*pid, limit);
  if (!status) {
    ::kill(*pid, SIGKILL);
    WaitExit(*pid, absl::Seconds(10));
    return absl::UnavailableError(absl::StrCat(
        argv[0], " did not finish within ", absl::FormatDuration(limit)));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::UnavailableError(absl::StrCat(argv[0], " failed (status ",
                                               *status, "):\n", LogTail(log)));
  }
  return absl::OkStatus();
}

// Fills `dir`/data with a new cluster. initdb takes about 2 s, so its result
// is kept once, complete (built aside, then renamed into place), in a
// template directory beside the servers' and copied (~0.1 s) by every later
// server: a ctest run starts one server per test process.
absl::Status InitDataDir(const PostgresServer::Options& options,
                         const Identity& id, const std::string& dir) {
  const std::string log = dir + "/postgres.log";
  const std::string data = dir + "/data";
  const std::string cache = absl::StrCat(
      std::filesystem::path(dir).parent_path().string(), "/chime-pg-template-",
      id.uid, "-", std::hash<std::string>()(options.bin_dir));
  if (::access((cache + "/data/PG_VERSION").c_str(), R_OK) == 0 &&
      RunToCompletion({"/bin/cp", "-a", cache + "/data", data}, id, log,
                      absl::Seconds(60))
          .ok()) {
    return absl::OkStatus();
  }
  std::error_code ec;
  std::filesystem::remove_all(data, ec);  // a partial copy
  // --no-sync: initdb's own files need not survive a power cut; the server
  // runs with fsync on.
  if (absl::Status s =
          RunToCompletion({options.bin_dir + "/initdb", "-D", data, "-U",
                           "postgres", "--auth=trust", "--no-locale", "-E",
                           "UTF8", "--no-sync", "--no-instructions"},
                          id, log, absl::Seconds(120));
      !s.ok()) {
    return s;
  }
  std::string aside = cache + ".XXXXXX";
  if (::mkdtemp(aside.data()) == nullptr) return absl::OkStatus();
  if ((!id.drop || ::chown(aside.c_str(), id.uid, id.gid) == 0) &&
      RunToCompletion({"/bin/cp", "-a", data, aside + "/data"}, id, log,
                      absl::Seconds(60))
          .ok() &&
      ::rename(aside.c_str(), cache.c_str()) == 0) {
    return absl::OkStatus();
  }
  std::filesystem::remove_all(aside, ec);  // another process was first
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(
    Options options) {
  const std::string initdb = options.bin_dir + "/initdb";
  if (::access(initdb.c_str(), X_OK) != 0 ||
      ::access((options.bin_dir + "/postgres").c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "PostgreSQL 15 is not installed (no ", initdb,
        "): run scripts/install-deps.sh (packages postgresql-15, libpq-dev)"));
  }
  absl::StatusOr<Identity> id = ServerIdentity();
  if (!id.ok()) return id.status();
  std::string pattern = BaseDir(*id) + "/chime-pg-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  std::unique_ptr<PostgresServer> server(
      new PostgresServer(std::move(options), pattern));
  const std::string& dir = server->dir_;
  if (id->drop && ::chown(dir.c_str(), id->uid, id->gid) != 0) {
    return absl::UnavailableError(
        absl::StrCat("chown ", dir, ": ", std::strerror(errno)));
  }
  if (absl::Status s = InitDataDir(server->options_, *id, dir); !s.ok()) {
    return s;
  }
  if (absl::Status s = server->Launch(); !s.ok()) return s;
  return server;
}

PostgresServer::~PostgresServer() {
  Stop().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status PostgresServer::Launch() {
  absl::StatusOr<Identity> id = ServerIdentity();
  if (!id.ok()) return id.status();
  const std::string log = dir_ + "/postgres.log";
  // A port picked free can be taken before postgres binds it: then postgres
  // exits, and another port is tried (not on Restart, which keeps its port).
  const bool pick = port_ == 0;
  absl::Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (pick) {
      absl::StatusOr<int> port = FreeLoopbackPort();
      if (!port.ok()) return port.status();
      port_ = *port;
    }
    absl::StatusOr<pid_t> pid =
        Spawn({options_.bin_dir + "/postgres", "-D", dir_ + "/data", "-p",
               absl::StrCat(port_), "-c", "listen_addresses=127.0.0.1", "-c",
               absl::StrCat("unix_socket_directories=", dir_), "-c",
               options_.fsync ? "fsync=on" : "fsync=off", "-c",
               "max_connections=200"},
              *id, log);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    const std::string ping = absl::StrCat(ConnInfo(), " connect_timeout=2");
    const absl::Time end = absl::Now() + options_.start_timeout;
    while (absl::Now() < end) {
      if (PQping(ping.c_str()) == PQPING_OK) return absl::OkStatus();
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    last = absl::UnavailableError(
        absl::StrCat("postgres did not accept connections on 127.0.0.1:", port_,
                     ":\n", LogTail(log)));
    if (pid_ > 0) StopWith(SIGKILL).IgnoreError();
    if (!pick) break;
  }
  return last;
}

std::string PostgresServer::ConnInfo(absl::string_view dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_,
                      " user=postgres dbname=", dbname);
}

std::string PostgresServer::Url(absl::string_view dbname) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", dbname);
}

absl::StatusOr<std::string> PostgresServer::CreateDatabase() {
  const std::string name = absl::StrCat("test_", ++databases_);
  const std::string conninfo = ConnInfo();
  PGconn* conn = PQconnectdb(conninfo.c_str());
  absl::Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = absl::UnavailableError(absl::StrCat("cannot connect to ", conninfo,
                                                 ": ", PQerrorMessage(conn)));
  } else {
    PGresult* r = PQexec(conn, absl::StrCat("CREATE DATABASE ", name).c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      status = absl::UnavailableError(absl::StrCat(
          "CREATE DATABASE ", name, ": ", PQresultErrorMessage(r)));
    }
    PQclear(r);
  }
  PQfinish(conn);
  if (!status.ok()) return status;
  return ConnInfo(name);
}

absl::Status PostgresServer::StopWith(int signal) {
  if (pid_ <= 0) return absl::OkStatus();
  ::kill(pid_, signal);
  if (!WaitExit(pid_, absl::Seconds(30))) {
    ::kill(pid_, SIGKILL);
    WaitExit(pid_, absl::Seconds(10));
    pid_ = -1;
    return absl::DeadlineExceededError(
        "postgres did not stop within 30 s; it was killed");
  }
  pid_ = -1;
  return absl::OkStatus();
}

absl::Status PostgresServer::Stop() { return StopWith(SIGINT); }

absl::Status PostgresServer::StopImmediately() { return StopWith(SIGQUIT); }

absl::Status PostgresServer::Restart() {
  if (pid_ > 0) {
    return absl::FailedPreconditionError("the server is still running");
  }
  return Launch();
}

}  // namespace chime::testing
