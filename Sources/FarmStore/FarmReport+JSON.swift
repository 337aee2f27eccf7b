import FarmCore

extension PageCounts {
    /// {total, queued, leased, done, failed, rereading}
    public var json: JSON {
        .object([("total", JSON(total))] + PageState.allCases.map { ($0.rawValue, JSON(self[$0])) }
                + [("rereading", JSON(rereading))])
    }
}

extension FarmReport {
    /// The report as JSON with stable keys (documented in `ocrfarm help status`).
    public var json: JSON {
        var fields: [(String, JSON)] = [
            ("store", JSON(store)),
            ("generated_at", JSON(Clock.iso8601(generatedAt))),
            ("scope", scope.map { documents in
                .object([("document", JSON(documents.first?.name)),
                         ("document_ids", .array(documents.map { JSON(Int($0.id.rawValue)) }))])
            } ?? .null),
            ("documents", JSON(documents)),
            ("pages", pages.json),
            ("by_document", .array(documentProgress.map { document in
                .object([("id", JSON(Int(document.id.rawValue))), ("name", JSON(document.name)), ("pages", document.pages.json)])
            })),
            ("by_document_truncated", JSON(documentProgressTruncated)),
            ("throughput", .object([
                ("last_minute", .rounded(throughput.lastMinute, places: 3)),
                ("last_10_minutes", .rounded(throughput.last10Minutes, places: 3)),
                ("last_hour", .rounded(throughput.lastHour, places: 3)),
                ("overall", .rounded(throughput.overall, places: 3)),
            ])),
            ("eta_seconds", etaSeconds.map { .rounded($0, places: 0) } ?? .null),
        ]
        fields.append(("failures", .array(failures.map { group in
            .object([
                ("code", JSON(group.code)), ("count", JSON(group.count)),
                ("example", group.example.map { example in
                    .object([
                        ("page_id", JSON(Int(example.page.rawValue))), ("document", JSON(example.document)),
                        ("page", JSON(example.number)), ("source", JSON(example.source.description)),
                        ("stage", JSON(example.stage)), ("message", JSON(example.message)),
                    ])
                } ?? .null),
            ])
        })))
        fields.append(("workers", .array(workers.map { worker in
            let record = worker.record
            return .object([
                ("id", JSON(record.id.rawValue)), ("host", JSON(record.host)), ("pid", JSON(record.pid)),
                ("slots", JSON(record.slots)), ("engine", JSON(record.engine)), ("state", JSON(worker.condition.rawValue)),
                ("pages_done", JSON(record.pagesDone)), ("pages_failed", JSON(record.pagesFailed)),
                ("pages_per_second", .rounded(worker.pagesPerSecond, places: 3)), ("leased", JSON(worker.leased)),
                ("last_seen", JSON(Clock.iso8601(record.lastSeen))),
                ("seconds_since_seen", .rounded(max(0, generatedAt - record.lastSeen), places: 1)),
            ])
        })))
        fields.append(("stage_times", .object([
            ("sample", JSON(sampleSize)),
            ("stages", .array(stages.map { stage in
                .object([("stage", JSON(stage.stage)), ("p50_ms", .rounded(stage.p50, places: 1)),
                         ("p95_ms", .rounded(stage.p95, places: 1))])
            })),
        ])))
        fields.append(("liveness", .object([
            ("heartbeat_ms", JSON(liveness.heartbeatMilliseconds)), ("liveness", JSON(liveness.liveness)),
            ("silent_after_seconds", .rounded(liveness.silentAfterSeconds, places: 1)),
        ])))
        fields.append(("store_disk", storeDisk.map { disk in
            .object([("available_bytes", JSON(Int(disk.available))), ("total_bytes", JSON(Int(disk.total))),
                     ("full", JSON(disk.isFull))])
        } ?? .null))
        fields.append(("coordinator_running", JSON(coordinatorRunning)))
        fields.append(("coordinator", coordinatorCounters ?? .null))
        return .object(fields)
    }
}
