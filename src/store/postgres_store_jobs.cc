// PostgresStore: jobs.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/job_codec.h"
#include "src/store/postgres_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

#define CHIME_JOB_COLUMNS \
  "id, generation, revision, deleted, watermark, watermark_generation, spec"

absl::StatusOr<JobRecord> JobFromRow(const PgResult& r, int row) {
  JobRecord job;
  job.id = r.Int(row, 0);
  job.generation = r.Int(row, 1);
  job.revision = r.Int(row, 2);
  job.deleted = r.Bool(row, 3);
  job.watermark = NanosToTime(r.Int(row, 4));
  job.watermark_generation = r.Int(row, 5);
  absl::StatusOr<JobSpec> spec = DecodeJobSpec(r.Bytes(row, 6));
  if (!spec.ok()) {
    return absl::DataLossError(
        absl::StrCat("job id ", job.id, ": ", spec.status().message()));
  }
  job.spec = *std::move(spec);
  return job;
}

absl::StatusOr<std::optional<JobRecord>> FindJob(PgTx& tx, const JobKey& key) {
  ASSIGN_OR_RETURN(PgResult r,
                   tx.Run("SELECT " CHIME_JOB_COLUMNS
                          " FROM jobs WHERE namespace = $1 AND name = $2",
                          {key.name_space, key.id}));
  if (r.rows() == 0) return std::nullopt;
  ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, 0));
  return job;
}

// Job writers are serialized on the revision counter's row (as SQLite's one
// writer is): a job's revision is then also the order its change commits in,
// which the change feed relies on. Returns the current revision.
absl::StatusOr<int64_t> LockRevision(PgTx& tx) {
  ASSIGN_OR_RETURN(
      PgResult r,
      tx.Run("SELECT value FROM meta WHERE key = 'revision' FOR UPDATE"));
  if (r.rows() != 1) {
    return absl::DataLossError("postgres: meta row \"revision\" is missing");
  }
  return r.Int(0, 0);
}

absl::Status SaveRevision(PgTx& tx, int64_t revision) {
  return tx
      .Run("UPDATE meta SET value = $1::bigint WHERE key = 'revision'",
           {revision})
      .status();
}

}  // namespace

// --- Jobs ---

absl::StatusOr<std::vector<JobRecord>> PostgresStore::PutJobs(
    absl::Span<const JobWrite> writes, MonoTime deadline) {
  RETURN_IF_ERROR(ValidateJobWrites(writes));
  std::vector<JobRecord> out;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    out.clear();
    ASSIGN_OR_RETURN(int64_t revision, LockRevision(tx));
    const int64_t first_revision = revision;
    for (const JobWrite& w : writes) {
      ASSIGN_OR_RETURN(std::optional<JobRecord> existing,
                       FindJob(tx, w.spec.key));
      ASSIGN_OR_RETURN(JobPutPlan plan,
                       PlanJobPut(existing ? &*existing : nullptr, w));
      if (!plan.write) {
        out.push_back(*std::move(existing));
        continue;
      }
      JobRecord job = existing ? *std::move(existing) : JobRecord{};
      ApplyJobPut(plan, w, &job);
      job.revision = ++revision;
      const PgParam spec = PgParam::Bytes(EncodeJobSpec(w.spec));
      if (job.id != 0) {
        RETURN_IF_ERROR(tx.Run("UPDATE jobs SET generation = $1::bigint, "
                               "revision = $2::bigint, deleted = false, "
                               "spec = $3 WHERE id = $4::bigint",
                               {job.generation, job.revision, spec, job.id})
                            .status());
        // Only a new generation's start: the watermark a scheduler advanced
        // meanwhile is never written back.
        if (plan.start_watermark) {
          RETURN_IF_ERROR(
              tx.Run("UPDATE jobs SET watermark = $1::bigint, "
                     "watermark_generation = $2::bigint WHERE id = $3::bigint",
                     {TimeToNanos(job.watermark), job.watermark_generation,
                      job.id})
                  .status());
        }
      } else {
        ASSIGN_OR_RETURN(
            PgResult r,
            tx.Run("INSERT INTO jobs (namespace, name, generation, revision, "
                   "deleted, watermark, watermark_generation, spec) VALUES "
                   "($1, $2, $3::bigint, $4::bigint, false, $5::bigint, "
                   "$6::bigint, $7) RETURNING id",
                   {w.spec.key.name_space, w.spec.key.id, job.generation,
                    job.revision, TimeToNanos(job.watermark),
                    job.watermark_generation, spec}));
        job.id = r.Int(0, 0);
      }
      out.push_back(std::move(job));
    }
    if (revision == first_revision) return absl::OkStatus();
    return SaveRevision(tx, revision);
  }));
  return out;
}

absl::Status PostgresStore::DeleteJob(const JobKey& key,
                                      int64_t expected_revision,
                                      MonoTime deadline) {
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t revision, LockRevision(tx));
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(tx, key));
    ASSIGN_OR_RETURN(bool write, PlanJobDelete(job ? &*job : nullptr, key,
                                               expected_revision));
    if (!write) return absl::OkStatus();
    RETURN_IF_ERROR(SaveRevision(tx, revision + 1));
    return tx
        .Run(
            "UPDATE jobs SET deleted = true, revision = $1::bigint "
            "WHERE id = $2::bigint",
            {revision + 1, job->id})
        .status();
  });
}

absl::StatusOr<JobRecord> PostgresStore::GetJob(const JobKey& key,
                                                MonoTime deadline) {
  JobRecord out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(tx, key));
    if (!job || job->deleted) {
      return JobNotFoundError(key);
    }
    out = *std::move(job);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<JobPage> PostgresStore::LoadJobs(JobId after, int limit,
                                                MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobPage page;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    page = JobPage{};
    page.next_after = after;
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT " CHIME_JOB_COLUMNS
               ", (SELECT value FROM meta WHERE key = 'revision') FROM jobs "
               "WHERE id > $1::bigint AND NOT deleted ORDER BY id LIMIT $2",
               {after, int64_t{limit} + 1}));
    page.done = r.rows() <= limit;
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, i));
      page.next_after = job.id;
      page.jobs.push_back(std::move(job));
    }
    if (r.rows() > 0) {
      page.revision = r.Int(0, 7);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(PgResult rev,
                     tx.Run("SELECT value FROM meta WHERE key = 'revision'"));
    page.revision = rev.Int(0, 0);
    return absl::OkStatus();
  }));
  return page;
}

absl::StatusOr<JobChanges> PostgresStore::JobChangesSince(int64_t revision,
                                                          int limit,
                                                          MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobChanges out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out = JobChanges{};
    ASSIGN_OR_RETURN(PgResult rev,
                     tx.Run("SELECT value FROM meta WHERE key = 'revision'"));
    out.revision = std::max(revision, rev.Int(0, 0));
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("SELECT " CHIME_JOB_COLUMNS
                            " FROM jobs WHERE revision > $1::bigint "
                            "ORDER BY revision LIMIT $2",
                            {revision, int64_t{limit} + 1}));
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, i));
      out.changes.push_back(std::move(job));
    }
    if (r.rows() > limit) out.revision = out.changes.back().revision;
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace chime::store
