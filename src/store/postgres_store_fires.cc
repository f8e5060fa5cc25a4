// PostgresStore: fires -- claims, missed records, watermarks.
//
// A ClaimBatch is written with a fixed number of statements, whatever its
// size: the fence check, one INSERT of every claim, two statements for the
// missed records and two for the watermarks (each pair left out when the
// batch has none). Items travel as array parameters, one array per column,
// paired again by unnest() on the server. Refusals are rare, so they are
// explained afterwards: only a batch with a claim that was not inserted
// costs one statement more.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/postgres_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

// The fires $1..$4 of a statement, as unnest()'s rows f(job, generation,
// scheduled, manual, i), i counting from 1 in the batch's order...
#define CHIME_PG_UNNEST_FIRES(extra_columns, extra_names) \
  "unnest($1::bigint[], $2::bigint[], $3::bigint[], "     \
  "$4::boolean[]" extra_columns                           \
  ") WITH ORDINALITY AS f(job, generation, scheduled, "   \
  "manual" extra_names ", i)"
// ... and the run that claimed each (claim.id NULL if none), by the FireKey.
#define CHIME_PG_JOIN_CLAIM                                                \
  " LEFT JOIN runs claim ON claim.job_id = f.job AND "                     \
  "claim.scheduled = f.scheduled AND claim.generation = f.generation AND " \
  "claim.manual = f.manual"

// Columns of FireRefs: the parameters $1..$4 of CHIME_PG_UNNEST_FIRES.
struct FireArrays {
  PgArray job, generation, scheduled, manual;

  void Add(const FireRef& fire) {
    job.Int(fire.job);
    generation.Int(fire.generation);
    scheduled.Int(TimeToNanos(fire.scheduled_time));
    manual.Bool(fire.manual);
  }
  std::vector<PgParam> Params() const {
    return {job.Param(), generation.Param(), scheduled.Param(), manual.Param()};
  }
};

// The first refused claim of `claims` (batch order) and why, after an INSERT
// of them all left some out; OK if every claim is stored (the ones left out
// were re-sends). `params` are the INSERT's first five: fires and RunIds.
absl::Status ExplainRefusedClaims(PgTx& tx,
                                  const std::vector<FireClaim>& claims,
                                  const std::vector<PgParam>& params) {
  ASSIGN_OR_RETURN(
      PgResult r,
      tx.Run("SELECT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = f.job), "
             "claim.id, other.job_id, other.generation, other.scheduled, "
             "other.manual FROM " CHIME_PG_UNNEST_FIRES(
                 ", $5::bigint[]", ", run") CHIME_PG_JOIN_CLAIM
             " LEFT JOIN runs other ON other.id = f.run ORDER BY f.i",
             params));
  if (r.rows() != static_cast<int>(claims.size())) {
    return absl::InternalError("postgres: claims explained partly");
  }
  for (size_t i = 0; i < claims.size(); ++i) {
    const FireClaim& c = claims[i];
    const int row = static_cast<int>(i);
    if (!r.Bool(row, 0)) return UnknownJobIdError(c.fire.job);
    if (!r.IsNull(row, 1)) {
      const RunId claimed_by = static_cast<RunId>(r.Int(row, 1));
      if (claimed_by == c.run) continue;  // stored: now, or by a re-send
      return ClaimConflictError(c.fire, claimed_by, c.run);
    }
    if (r.IsNull(row, 2)) {
      return absl::UnavailableError(
          absl::StrCat("claim of run ", c.run,
                       " conflicted with a claim rolled back since"));
    }
    const FireRef claimed{r.Int(row, 2), r.Int(row, 3),
                          NanosToTime(r.Int(row, 4)), r.Bool(row, 5)};
    return RunIdReusedError(c.run, claimed, c.fire);
  }
  return absl::OkStatus();
}

// Inserts every claim, as a pending run, in one statement. A claim of an
// unknown job (the join), or whose fire or RunId is taken (ON CONFLICT DO
// NOTHING, also by an earlier claim of the same batch), is left out; then
// ExplainRefusedClaims gives the answer.
absl::Status InsertClaims(PgTx& tx, const ClaimBatch& batch, int64_t token) {
  if (batch.claims.empty()) return absl::OkStatus();
  FireArrays fires;
  PgArray runs;
  for (const FireClaim& c : batch.claims) {
    fires.Add(c.fire);
    runs.Int(static_cast<int64_t>(c.run));
  }
  std::vector<PgParam> params = fires.Params();
  params.push_back(runs.Param());
  std::vector<PgParam> insert = params;
  insert.insert(insert.end(), {static_cast<int64_t>(RunState::kPending), token,
                               TimeToNanos(batch.at), kRunBaseBytes});
  ASSIGN_OR_RETURN(
      PgResult r,
      tx.Run(
          "INSERT INTO runs SELECT f.run, f.job, f.generation, "
          "f.scheduled, f.manual, $6::smallint, 0, $7::bigint, $8::bigint, "
          "$8::bigint, ''::bytea, $9::bigint FROM " CHIME_PG_UNNEST_FIRES(
              ", $5::bigint[]", ", run") " JOIN jobs ON jobs.id = f.job "
                                         "ORDER BY f.i ON CONFLICT DO NOTHING",
          insert));
  if (r.affected() == static_cast<int64_t>(batch.claims.size())) {
    return absl::OkStatus();
  }
  return ExplainRefusedClaims(tx, batch.claims, params);
}

// Stores each missed record once (ON CONFLICT DO NOTHING on its key), after
// checking their jobs exist.
absl::Status InsertMissed(PgTx& tx, const std::vector<MissedRecord>& missed) {
  if (missed.empty()) return absl::OkStatus();
  PgArray job, first, reason, generation, last, count, capped;
  for (const MissedRecord& m : missed) {
    job.Int(m.job);
    first.Int(TimeToNanos(m.first));
    reason.Int(static_cast<int64_t>(m.reason));
    generation.Int(m.generation);
    last.Int(TimeToNanos(m.last));
    count.Int(m.count);
    capped.Bool(m.count_capped);
  }
  ASSIGN_OR_RETURN(
      PgResult unknown,
      tx.Run("SELECT m.job FROM unnest($1::bigint[]) WITH ORDINALITY AS "
             "m(job, i) WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = "
             "m.job) ORDER BY m.i LIMIT 1",
             {job.Param()}));
  if (unknown.rows() > 0) return UnknownJobIdError(unknown.Int(0, 0));
  return tx
      .Run(
          "INSERT INTO missed SELECT * FROM unnest($1::bigint[], "
          "$2::bigint[], $3::smallint[], $4::bigint[], $5::bigint[], "
          "$6::bigint[], $7::boolean[]) ON CONFLICT DO NOTHING",
          {job.Param(), first.Param(), reason.Param(), generation.Param(),
           last.Param(), count.Param(), capped.Param()})
      .status();
}

// Locks the jobs of `advances` (in id order, so that batches sharing jobs
// cannot deadlock), applies the advances to their stored pairs in batch
// order, here, and writes the pairs that changed in one UPDATE.
absl::Status AdvanceWatermarks(PgTx& tx,
                               const std::vector<WatermarkAdvance>& advances) {
  if (advances.empty()) return absl::OkStatus();
  PgArray ids;
  for (const WatermarkAdvance& w : advances) ids.Int(w.job);
  ASSIGN_OR_RETURN(
      PgResult r,
      tx.Run("SELECT id, generation, watermark_generation, watermark FROM "
             "jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE",
             {ids.Param()}));
  struct Pair {
    int64_t job_generation;
    int64_t watermark_generation;
    absl::Time watermark;
    bool changed = false;
  };
  absl::flat_hash_map<JobId, Pair> pairs;
  for (int i = 0; i < r.rows(); ++i) {
    pairs[r.Int(i, 0)] =
        Pair{r.Int(i, 1), r.Int(i, 2), NanosToTime(r.Int(i, 3))};
  }
  for (size_t i = 0; i < advances.size(); ++i) {
    const WatermarkAdvance& w = advances[i];
    auto it = pairs.find(w.job);
    if (it == pairs.end()) return UnknownJobIdError(w.job);
    Pair& pair = it->second;
    RETURN_IF_ERROR(CheckWatermarkAdvance(i, w, pair.job_generation));
    pair.changed |=
        AdvanceWatermark(w, &pair.watermark_generation, &pair.watermark);
  }
  PgArray changed, generations, watermarks;
  for (int i = 0; i < r.rows(); ++i) {  // in id order
    const Pair& pair = pairs[r.Int(i, 0)];
    if (!pair.changed) continue;
    changed.Int(r.Int(i, 0));
    generations.Int(pair.watermark_generation);
    watermarks.Int(TimeToNanos(pair.watermark));
  }
  if (changed.empty()) return absl::OkStatus();
  return tx
      .Run(
          "UPDATE jobs SET watermark_generation = u.generation, "
          "watermark = u.watermark FROM unnest($1::bigint[], $2::bigint[], "
          "$3::bigint[]) AS u(id, generation, watermark) "
          "WHERE jobs.id = u.id",
          {changed.Param(), generations.Param(), watermarks.Param()})
      .status();
}

}  // namespace

absl::Status PostgresStore::ClaimFires(const Fence& fence,
                                       const ClaimBatch& batch,
                                       MonoTime deadline) {
  RETURN_IF_ERROR(ValidateClaimBatch(batch));
  // Any error rolls back the whole transaction: all or nothing. Claims are
  // checked first, then missed records, then watermarks, each in batch
  // order: the error names the first refused item.
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(tx, fence));
    RETURN_IF_ERROR(InsertClaims(tx, batch, fence.token));
    RETURN_IF_ERROR(InsertMissed(tx, batch.missed));
    return AdvanceWatermarks(tx, batch.watermarks);
  });
}

absl::StatusOr<std::vector<ClaimInfo>> PostgresStore::LookupClaims(
    absl::Span<const FireRef> fires, MonoTime deadline) {
  FireArrays arrays;
  for (const FireRef& f : fires) arrays.Add(f);
  std::vector<ClaimInfo> out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out.clear();
    if (fires.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT claim.id, claim.token FROM " CHIME_PG_UNNEST_FIRES(
                   "", "") CHIME_PG_JOIN_CLAIM " ORDER BY f.i",
               arrays.Params()));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(ClaimInfo{static_cast<RunId>(r.Int(i, 0)), r.Int(i, 1)});
    }
    return absl::OkStatus();
  }));
  return out;
}

#undef CHIME_PG_JOIN_CLAIM
#undef CHIME_PG_UNNEST_FIRES

absl::StatusOr<MissedPage> PostgresStore::ListMissed(
    JobId job, const std::optional<MissedCursor>& after, int limit,
    MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  MissedPage page;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    page = MissedPage{};
    const MissedCursor start =
        after ? *after : MissedCursor{absl::InfinitePast(), MissReason{}, -1};
    // Row values compare lexicographically: everything after the cursor.
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run(
            "SELECT first, reason, generation, last, count, capped "
            "FROM missed WHERE job_id = $1::bigint AND "
            "(first, reason, generation) > ($2::bigint, $3::smallint, "
            "$4::bigint) ORDER BY first, reason, generation LIMIT $5",
            {job, TimeToNanos(start.first), static_cast<int64_t>(start.reason),
             start.generation, int64_t{limit} + 1}));
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      page.records.push_back(MissedRecord{
          job, r.Int(i, 2), NanosToTime(r.Int(i, 0)), NanosToTime(r.Int(i, 3)),
          r.Int(i, 4), r.Bool(i, 5), static_cast<MissReason>(r.Int(i, 1))});
    }
    if (r.rows() > limit) {
      const MissedRecord& last = page.records.back();
      page.next = MissedCursor{last.first, last.reason, last.generation};
    }
    return absl::OkStatus();
  }));
  return page;
}

}  // namespace chime::store
