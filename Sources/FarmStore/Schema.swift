import SQLite

/// The store's schema, one numbered migration per change. Never edit a released migration; add one.
enum Schema {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "farm", sql: """
            CREATE TABLE documents (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                source BLOB NOT NULL,
                content_hash TEXT,
                priority INTEGER NOT NULL DEFAULT 0,
                options TEXT NOT NULL DEFAULT '{}',
                page_count INTEGER NOT NULL,
                submitted_at REAL NOT NULL
            ) STRICT;
            CREATE INDEX documents_hash ON documents(content_hash);
            CREATE INDEX documents_name ON documents(name);

            CREATE TABLE pages (
                id INTEGER PRIMARY KEY,
                document_id INTEGER NOT NULL REFERENCES documents(id),
                number INTEGER NOT NULL,
                source_path BLOB NOT NULL,
                source_index INTEGER NOT NULL,
                source_kind TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'done', 'failed')),
                priority INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                tries INTEGER NOT NULL DEFAULT 0,
                not_before REAL NOT NULL DEFAULT 0,
                lease_worker TEXT,
                leased_at REAL,
                lease_expires REAL,
                updated_at REAL NOT NULL,
                failure_stage TEXT,
                failure_code TEXT,
                failure_message TEXT,
                UNIQUE (document_id, number)
            ) STRICT;
            CREATE INDEX pages_queue ON pages(priority DESC, id) WHERE state = 'queued';
            CREATE INDEX pages_state ON pages(state);
            CREATE INDEX pages_leases ON pages(lease_worker) WHERE state = 'leased';

            CREATE TABLE attempts (
                page_id INTEGER NOT NULL,
                number INTEGER NOT NULL,
                worker_id TEXT,
                started_at REAL,
                ended_at REAL NOT NULL,
                outcome TEXT NOT NULL,
                stage TEXT,
                code TEXT,
                message TEXT,
                PRIMARY KEY (page_id, number)
            ) STRICT, WITHOUT ROWID;

            CREATE TABLE results (
                page_id INTEGER PRIMARY KEY,
                attempt INTEGER NOT NULL,
                worker_id TEXT NOT NULL,
                engine TEXT NOT NULL,
                text TEXT NOT NULL,
                mean_confidence REAL NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                structure BLOB NOT NULL,
                timings TEXT NOT NULL,
                finished_at REAL NOT NULL
            ) STRICT;
            CREATE INDEX results_finished ON results(finished_at);

            CREATE TABLE artifacts (
                page_id INTEGER NOT NULL,
                name TEXT NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (page_id, name)
            ) STRICT, WITHOUT ROWID;

            CREATE TABLE workers (
                id TEXT PRIMARY KEY,
                host TEXT NOT NULL,
                pid INTEGER NOT NULL,
                slots INTEGER NOT NULL,
                engine TEXT NOT NULL,
                languages TEXT NOT NULL,
                version TEXT NOT NULL,
                first_seen REAL NOT NULL,
                last_seen REAL NOT NULL,
                state TEXT NOT NULL,
                pages_done INTEGER NOT NULL DEFAULT 0,
                pages_failed INTEGER NOT NULL DEFAULT 0
            ) STRICT;

            CREATE TABLE coordinator (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            ) STRICT;
            """),
        // Search (issue 6): page text in an FTS5 index (rowid = page id), written by `Store.complete` with Han and
        // kana spaced out (`SearchText`), which SQL cannot do: results stored before this version are indexed by
        // Swift code when the store is next opened for writing (`Store.backfillSearchIndex`), and the marker row
        // says that is still to do. Also indexes for `status` (results_finished exists since version 1).
        Migration(version: 2, name: "search", sql: """
            CREATE VIRTUAL TABLE page_search USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
            INSERT INTO coordinator (key, value) SELECT 'search_backfill', '0' WHERE EXISTS (SELECT 1 FROM results);
            CREATE INDEX IF NOT EXISTS results_finished ON results(finished_at);
            CREATE INDEX pages_document_state ON pages(document_id, state);
            """),
        // The page file as submitted (issue 18): its SHA-256 and size, checked by the coordinator before any byte
        // of it leaves, so a file changed or swapped (for a link to a secret) after submit fails as
        // source-changed instead of being sent. Pages submitted before this version have neither and are sent as
        // they are read.
        Migration(version: 3, name: "source check", sql: """
            ALTER TABLE pages ADD COLUMN source_hash TEXT;
            ALTER TABLE pages ADD COLUMN source_size INTEGER;
            """),
        // Documents found by name (issue 20): `search muller` finds "Brief an Müller (1).tif", accents folded as
        // in the page index. Names already stored are indexed as they are; new ones are spaced out like page text
        // (`SearchText`), so a Chinese name is found by any of its words.
        Migration(version: 4, name: "document names", sql: """
            CREATE VIRTUAL TABLE document_search USING fts5(name, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
            INSERT INTO document_search (rowid, name) SELECT id, name FROM documents;
            """),
        // A worker id's CURVE key, bound at its first HELLO (issue 18): kept across coordinator restarts, so after
        // a restart another key still cannot take a known worker's id.
        Migration(version: 5, name: "worker keys", sql: """
            CREATE TABLE worker_keys (
                worker_id TEXT PRIMARY KEY,
                key TEXT NOT NULL,
                bound_at REAL NOT NULL
            ) STRICT;
            """),
        // The page's quality figure (issue 20): the worker puts it in the result's structure (`PageResult.quality`);
        // a virtual column reads it from there, so results written before this version, and by workers that do not
        // measure it, are NULL (not measured) and nothing is rewritten. The index is what `review` sorts by; a
        // structure that is not JSON gives NULL instead of failing the insert.
        Migration(version: 6, name: "quality", sql: """
            ALTER TABLE results ADD COLUMN quality REAL GENERATED ALWAYS AS (
                CASE WHEN json_valid(CAST(structure AS TEXT))
                     THEN json_extract(CAST(structure AS TEXT), '$.quality.figure') END) VIRTUAL;
            CREATE INDEX results_quality ON results(quality) WHERE quality IS NOT NULL;
            """),
        // `submit` asks, for each file with new content, whether its path was submitted before with other content
        // (`Store.documents(fromSource:)`): without an index that is a scan of every document per file.
        Migration(version: 7, name: "documents by source", sql: """
            CREATE INDEX documents_source ON documents(source);
            """),
        // `reread` (issue 20): a page read again keeps its earlier results. The current result stays in `results`
        // (status, search and export use it) until the new one lands; then it moves here, with the options it was
        // read with (the document's options then) and when it was replaced.
        Migration(version: 8, name: "result history", sql: """
            CREATE TABLE result_history (
                page_id INTEGER NOT NULL,
                attempt INTEGER NOT NULL,
                worker_id TEXT NOT NULL,
                engine TEXT NOT NULL,
                text TEXT NOT NULL,
                mean_confidence REAL NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                structure BLOB NOT NULL,
                timings TEXT NOT NULL,
                finished_at REAL NOT NULL,
                options TEXT NOT NULL,
                replaced_at REAL,
                PRIMARY KEY (page_id, attempt)
            ) STRICT;
            """),
        // API tokens (issue 21, `ocrfarm token`): only the SHA-256 of each token is kept, so a copy of the store
        // gives no one a token; revoked tokens stay listed with the time they were revoked.
        Migration(version: 9, name: "tokens", sql: """
            CREATE TABLE tokens (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('read', 'admin')),
                hash TEXT NOT NULL UNIQUE,
                created_at REAL NOT NULL,
                revoked_at REAL
            ) STRICT;
            """),
        // `status` and `/api/status` at a million pages (issue 21): the pages not done (`pages_unfinished`, read in
        // document order for the unfinished documents and the farm's counts) and the failed pages' codes
        // (`pages_failures`) as partial indexes that cover their queries, so neither reads the million rows or
        // their index entries; and results counted per minute of `finished_at` (`result_minutes`, kept exact by
        // triggers on every insert, delete and change of `results`), so the throughput windows add up minutes
        // instead of counting every result of the last hour in the index.
        Migration(version: 10, name: "report indexes", sql: """
            CREATE INDEX pages_unfinished ON pages(document_id, state, attempts) WHERE state != 'done';
            CREATE INDEX pages_failures ON pages(state, failure_code) WHERE state = 'failed';
            CREATE TABLE result_minutes (
                minute INTEGER PRIMARY KEY,
                count INTEGER NOT NULL
            ) STRICT;
            INSERT INTO result_minutes (minute, count)
                SELECT CAST(finished_at / 60 AS INTEGER), count(*) FROM results GROUP BY 1;
            CREATE TRIGGER results_minute_insert AFTER INSERT ON results BEGIN
                INSERT INTO result_minutes (minute, count) VALUES (CAST(NEW.finished_at / 60 AS INTEGER), 1)
                    ON CONFLICT (minute) DO UPDATE SET count = count + 1;
            END;
            CREATE TRIGGER results_minute_delete AFTER DELETE ON results BEGIN
                UPDATE result_minutes SET count = count - 1 WHERE minute = CAST(OLD.finished_at / 60 AS INTEGER);
            END;
            CREATE TRIGGER results_minute_update AFTER UPDATE OF finished_at ON results BEGIN
                UPDATE result_minutes SET count = count - 1 WHERE minute = CAST(OLD.finished_at / 60 AS INTEGER);
                INSERT INTO result_minutes (minute, count) VALUES (CAST(NEW.finished_at / 60 AS INTEGER), 1)
                    ON CONFLICT (minute) DO UPDATE SET count = count + 1;
            END;
            """),
        // Render on demand (issue 19): a result keeps its whole reading once, zlib-compressed (`PageModel`, see
        // `Store.model(of:)`), and hOCR, ALTO, PAGE and the page JSON are rendered from it when exported or served;
        // `structure` then holds the page-level fields only (no blocks). Results stored before this version (and
        // by workers that send no model) keep their structure whole and their renderings in `artifacts`: NULL
        // here, and exported and served as stored.
        Migration(version: 11, name: "page models", sql: """
            ALTER TABLE results ADD COLUMN model BLOB;
            ALTER TABLE result_history ADD COLUMN model BLOB;
            """),
        // The document list at a million pages (issue 21, decision 0075): each document's pages by state and its
        // results' quality (how many measured, their sum in millionths, an integer so that adding and taking away
        // never drifts, and the lowest) in one row, kept exact by triggers on every insert, delete and state
        // change of `pages` and every insert, delete and change of `results`, so `/api/documents` reads a row per
        // document instead of a thousand pages and their results' structures (the quality column parses JSON).
        // A page never moves to another document. `status` reads the documents with pages not done from the partial
        // index `document_counts_unfinished` (a row per such document, not one per page). The lowest quality is looked for again only when the result
        // that held it goes (`Store.delete` drops a document's row first, so deleting it looks for nothing).
        Migration(version: 12, name: "document counts", sql: """
            CREATE TABLE document_counts (
                document_id INTEGER PRIMARY KEY,
                queued INTEGER NOT NULL DEFAULT 0,
                leased INTEGER NOT NULL DEFAULT 0,
                done INTEGER NOT NULL DEFAULT 0,
                failed INTEGER NOT NULL DEFAULT 0,
                quality_count INTEGER NOT NULL DEFAULT 0,
                quality_sum INTEGER NOT NULL DEFAULT 0,
                quality_min REAL
            ) STRICT;
            INSERT INTO document_counts (document_id, queued, leased, done, failed)
                SELECT document_id, sum(state = 'queued'), sum(state = 'leased'), sum(state = 'done'), sum(state = 'failed')
                FROM pages GROUP BY document_id;
            INSERT OR IGNORE INTO document_counts (document_id) SELECT id FROM documents;
            CREATE INDEX document_counts_unfinished ON document_counts(document_id, queued, leased, failed)
                WHERE queued + leased + failed > 0;
            UPDATE document_counts SET (quality_count, quality_sum, quality_min) = (
                SELECT count(r.quality), coalesce(sum(CAST(round(r.quality * 1000000) AS INTEGER)), 0), min(r.quality)
                FROM pages p JOIN results r ON r.page_id = p.id WHERE p.document_id = document_counts.document_id);
            CREATE TRIGGER documents_count_insert AFTER INSERT ON documents BEGIN
                INSERT OR IGNORE INTO document_counts (document_id) VALUES (NEW.id);
            END;
            CREATE TRIGGER documents_count_delete AFTER DELETE ON documents BEGIN
                DELETE FROM document_counts WHERE document_id = OLD.id;
            END;
            CREATE TRIGGER pages_count_insert AFTER INSERT ON pages BEGIN
                INSERT INTO document_counts (document_id, queued, leased, done, failed)
                    VALUES (NEW.document_id, NEW.state = 'queued', NEW.state = 'leased', NEW.state = 'done', NEW.state = 'failed')
                    ON CONFLICT (document_id) DO UPDATE SET queued = queued + excluded.queued, leased = leased + excluded.leased,
                        done = done + excluded.done, failed = failed + excluded.failed;
            END;
            CREATE TRIGGER pages_count_delete AFTER DELETE ON pages BEGIN
                UPDATE document_counts SET queued = queued - (OLD.state = 'queued'), leased = leased - (OLD.state = 'leased'),
                    done = done - (OLD.state = 'done'), failed = failed - (OLD.state = 'failed')
                WHERE document_id = OLD.document_id;
            END;
            CREATE TRIGGER pages_count_update AFTER UPDATE OF state ON pages WHEN OLD.state != NEW.state BEGIN
                UPDATE document_counts SET
                    queued = queued - (OLD.state = 'queued') + (NEW.state = 'queued'),
                    leased = leased - (OLD.state = 'leased') + (NEW.state = 'leased'),
                    done = done - (OLD.state = 'done') + (NEW.state = 'done'),
                    failed = failed - (OLD.state = 'failed') + (NEW.state = 'failed')
                WHERE document_id = NEW.document_id;
            END;
            CREATE TRIGGER results_quality_insert AFTER INSERT ON results WHEN NEW.quality IS NOT NULL BEGIN
                UPDATE document_counts SET quality_count = quality_count + 1,
                    quality_sum = quality_sum + CAST(round(NEW.quality * 1000000) AS INTEGER),
                    quality_min = min(coalesce(quality_min, NEW.quality), NEW.quality)
                WHERE document_id = (SELECT document_id FROM pages WHERE id = NEW.page_id);
            END;
            CREATE TRIGGER results_quality_delete AFTER DELETE ON results WHEN OLD.quality IS NOT NULL BEGIN
                UPDATE document_counts SET quality_count = quality_count - 1,
                    quality_sum = quality_sum - CAST(round(OLD.quality * 1000000) AS INTEGER),
                    quality_min = CASE WHEN OLD.quality > quality_min THEN quality_min ELSE (
                        SELECT min(r.quality) FROM pages p JOIN results r ON r.page_id = p.id
                        WHERE p.document_id = document_counts.document_id) END
                WHERE document_id = (SELECT document_id FROM pages WHERE id = OLD.page_id);
            END;
            CREATE TRIGGER results_quality_update AFTER UPDATE OF structure, page_id ON results
                WHEN OLD.quality IS NOT NEW.quality OR OLD.page_id != NEW.page_id BEGIN
                UPDATE document_counts SET quality_count = quality_count - 1,
                    quality_sum = quality_sum - CAST(round(OLD.quality * 1000000) AS INTEGER),
                    quality_min = CASE WHEN OLD.quality > quality_min THEN quality_min ELSE (
                        SELECT min(r.quality) FROM pages p JOIN results r ON r.page_id = p.id
                        WHERE p.document_id = document_counts.document_id) END
                WHERE OLD.quality IS NOT NULL AND document_id = (SELECT document_id FROM pages WHERE id = OLD.page_id);
                UPDATE document_counts SET quality_count = quality_count + 1,
                    quality_sum = quality_sum + CAST(round(NEW.quality * 1000000) AS INTEGER),
                    quality_min = min(coalesce(quality_min, NEW.quality), NEW.quality)
                WHERE NEW.quality IS NOT NULL AND document_id = (SELECT document_id FROM pages WHERE id = NEW.page_id);
            END;
            """),
        // Parts of multi-page files, sent one page per JOB (issue 37): in Store+Parts.swift.
        Store.partsMigration,
        // A document's catalogue fields (issue 36, `DocumentMetadata`): one row per document that has any, each
        // field one column, '' when unset. They are searched through `document_search` (the name and the fields).
        Migration(version: 14, name: "document metadata", sql: """
            CREATE TABLE document_metadata (
                document_id INTEGER PRIMARY KEY REFERENCES documents(id),
                title TEXT NOT NULL DEFAULT '',
                date TEXT NOT NULL DEFAULT '',
                creator TEXT NOT NULL DEFAULT '',
                identifier TEXT NOT NULL DEFAULT '',
                shelfmark TEXT NOT NULL DEFAULT '',
                updated_at REAL NOT NULL
            ) STRICT;
            """),
        // Dispatch's cost per page (issue 37, decision 0089, stop 39): the two changes of state every page makes,
        // a lease (queued → leased) and its result (→ done), no longer fire the `document_counts` trigger (~5 µs of
        // SQLite each); `Store.lease` and `Store.complete` note them and `Store.write` adds them to
        // `document_counts` in one UPDATE per document before its COMMIT (Store+DocumentCounts.swift), in the same
        // transaction, so the counts can never part from the pages. Only those two make a page leased or done; every
        // other change of state (fail, retry, give back, requeue, reread) still goes through the trigger. The index
        // `pages_state` goes too (~1.5 µs a change): each state's pages have a partial index of their own
        // (`pages_queue`, `pages_leases`, `pages_failures`, `pages_unfinished`), and the farm's done pages are the sum
        // of `document_counts`. And the CHECK on `pages.state` says the same with `=` and `OR`: SQLite builds an
        // `IN` list of four as a temporary b-tree at every UPDATE of a page's state (~2–3 µs). The table keeps its
        // rows: SQLite's own procedure for changing a CHECK constraint (https://sqlite.org/lang_altertable.html,
        // "writable_schema"), safe because the new constraint holds for exactly the same rows; RESET reloads the
        // schema, and the DDL below moves the schema cookie so other connections reload it too.
        Migration(version: 15, name: "dispatch counts", sql: """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (state IN (''queued'', ''leased'', ''done'', ''failed''))',
                'CHECK (state = ''queued'' OR state = ''leased'' OR state = ''done'' OR state = ''failed'')')
            WHERE type = 'table' AND name = 'pages';
            PRAGMA writable_schema = RESET;
            DROP INDEX pages_state;
            DROP TRIGGER pages_count_update;
            CREATE TRIGGER pages_count_update AFTER UPDATE OF state ON pages
                WHEN OLD.state != NEW.state AND NEW.state != 'leased' AND NEW.state != 'done' BEGIN
                UPDATE document_counts SET
                    queued = queued - (OLD.state = 'queued') + (NEW.state = 'queued'),
                    leased = leased - (OLD.state = 'leased'),
                    done = done - (OLD.state = 'done'),
                    failed = failed - (OLD.state = 'failed') + (NEW.state = 'failed')
                WHERE document_id = NEW.document_id;
            END;
            """),
    ]
}
