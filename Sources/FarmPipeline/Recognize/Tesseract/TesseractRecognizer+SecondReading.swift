import FarmCore
import Leptonica
import Tesseract

/// The page as decoded, before the correction stages, and where its points are on the corrected page.
/// Holds one image reference; confined to the page slot's thread like the page itself.
public struct UncorrectedImage {
    public let image: Pix
    /// Uncorrected image → corrected page (the stages' `PageContext.toPage`).
    public let toPage: Homography

    public init(image: Pix, toPage: Homography) {
        self.image = image
        self.toPage = toPage
    }
}

/// How sure a first reading is, line by line, and whether the page is worth reading again.
///
/// A line is weak when its length-weighted word confidence is low, or when most of its longer words are in no
/// dictionary (Tesseract reports this per word; noise read as letters is rarely a word). A page is weak when its weak
/// lines hold a fair share of its characters, or when it has ink but the reading found (almost) no text. The limits
/// are round numbers, not fitted to pages: strong print reads at 90 and more, and every second reading is kept only
/// where it is surer than the first.
struct ReadingStrength {
    static let weakConfidence = 75.0
    static let weakDictionaryShare = 0.5
    static let weakPageShare = 0.15
    /// Fewer words than this is "no text".
    static let fewWords = 3

    /// One flag per line, in the order of `Recognition.lines` (and `PageResult.lines`).
    let weakLines: [Bool]
    let weakCharacters: Int
    let characters: Int
    let words: Int

    init(_ recognition: Recognition, usesDictionary: Bool) {
        var weakLines: [Bool] = []
        var weakCharacters = 0, characters = 0
        for line in recognition.lines {
            let (weak, total) = Self.weakness(line.words.map { ($0.text, $0.confidence, $0.isNumeric, $0.isFromDictionary) },
                                              usesDictionary: usesDictionary)
            weakLines.append(weak)
            characters += total
            if weak { weakCharacters += total }
        }
        self.weakLines = weakLines
        self.weakCharacters = weakCharacters
        self.characters = characters
        words = recognition.words.count
    }

    /// Whether `words` (read on the page, as `PageResult` keeps them) would make a weak line by the measures above:
    /// the check a second reading must pass before it stands in for the first. Without Tesseract's numeric flag, a
    /// checkable word is one of three letters or more and no digit (as the quality figure counts them).
    static func isWeak(_ words: [Word], usesDictionary: Bool) -> Bool {
        weakness(words.map { ($0.text, $0.confidence, $0.text.contains(where: \.isNumber), $0.fromDictionary) },
                 usesDictionary: usesDictionary).weak
    }

    /// Whether a line of `words` is weak: its confidence (weighted by the words' lengths) below `weakConfidence`,
    /// or, with a dictionary, two checkable words or more (three letters or more, not numbers: the ones a dictionary
    /// can vouch for) of which less than `weakDictionaryShare` are in it; and its characters (a word counts one at
    /// least). A line without words is weak.
    private static func weakness(_ words: [(text: String, confidence: Double, isNumeric: Bool, fromDictionary: Bool)],
                                 usesDictionary: Bool) -> (weak: Bool, characters: Int) {
        let lengths = words.map { max(1, $0.text.count) }
        let total = lengths.reduce(0, +)
        let confidence = total > 0 ? zip(words, lengths).map { $0.confidence * Double($1) }.reduce(0, +) / Double(total) : 0
        let checkable = words.filter { !$0.isNumeric && $0.text.filter(\.isLetter).count >= 3 }
        let share = checkable.isEmpty ? 1 : Double(checkable.filter(\.fromDictionary).count) / Double(checkable.count)
        let weak = confidence < weakConfidence || (usesDictionary && checkable.count >= 2 && share < weakDictionaryShare)
        return (weak, total)
    }

    var weakShare: Double { characters > 0 ? Double(weakCharacters) / Double(characters) : 0 }
    var hasFewWords: Bool { words < Self.fewWords }
    var isWeak: Bool { weakShare >= Self.weakPageShare }
}

/// What reading the weak lines alone again did: how many it read, replaced and read with the same words, and whether
/// it stopped after a sample that all read the same (`rereadWeakLines`).
struct LineRereading {
    let read: Int
    let replaced: Int
    let same: Int
    var stoppedAfterSample = false

    /// The variant's findings.
    var json: JSON {
        guard read > 0 else { return .object([("read", 0), ("replaced", 0)]) }
        return .object([("read", JSON(read)), ("replaced", JSON(replaced)), ("same_text", JSON(same))]
                       + (stoppedAfterSample ? [("stopped_after_sample", true)] : []))
    }
}

/// One line the second reading replaced or added, and the variant that read it.
struct SecondReadingDecision {
    let box: Rect
    let variant: String
    let added: Bool
}

/// What a second reading has done so far: the lines still weak and those still open (weak at first and not
/// confirmed by a same-text reading), the regions decided, the variants read, those skipped as the same image and
/// those skipped as the first reading lost nothing.
struct SecondReadingProgress {
    var weak: [Bool]
    var open: [Bool]
    var decisions: [SecondReadingDecision] = []
    var variants: [(String, JSON)] = []
    var skipped: [JSON] = []
    var nothingLost: [JSON] = []
}

extension TesseractRecognizer {
    /// The least a line read only by a second reading must score to be added (it overlaps no word of the first).
    static let addedLineConfidence = 70.0
    /// How many points of confidence a second reading of a line must gain to replace the first: confidences of two
    /// readings of the same words differ by a point or two from the image alone.
    static let surerMargin = 5.0
    /// The share of the ink the stages may change and leave the page the same image: a speck's worth (the same
    /// pixels resampled the same way change none; of the pages measured, those the stages changed at all, receipts
    /// flattened and synthetic pages, changed 5% and more).
    static let sameInk = 0.001
    /// How many weak lines are read before the rest: enough that all reading the same words is no accident.
    static let sampleLines = 4
    /// The most weak lines read again one by one (a page of noise must not take minutes).
    static let maximumRereadLines = 80
    /// The window, in pixels of the page as the file has it, that joins the dots of dot-matrix print: their gaps
    /// are a pixel or two at the resolutions receipts are scanned at.
    static let dotGap = 3

    /// `fast`'s second reading, for a page whose first reading is weak, in variants that differ from what the first
    /// reading saw, cheapest first. Each weak line is read alone with the other binarization, unless its pixels are
    /// two-tone (every threshold then makes the same picture); a line it reads with the same words is weak by what it
    /// says (paths, codes, names), not by how it is printed, and is read no further. Then the page is read whole as
    /// decoded (before the correction stages; boxes mapped to the corrected page), unless the stages changed nothing
    /// a reading would see or the first reading lost nothing (`nothingLost`: the other binarization confirmed most
    /// weak lines, and the reading covers the page's letters); only its lines that lie on the corrected page count
    /// (`linesOnPage`), and each row of the page keeps the surer of the two readings where the surer one brings
    /// strong lines (`chooseRegions`); the page is read sparsely when the first reading found no text on an inked page. A weak line keeps the surest of
    /// its readings; a confident line found only by a whole-page reading is added. Strong pages cost nothing.
    /// Returns the findings: whether the page was weak, what each variant read, which were skipped as the same
    /// image, and which lines which variant won.
    func readSecondTime(_ result: inout PageResult, first: Recognition, page: DecodedPage, image: Pix,
                        options: RecognitionOptions, since start: UInt64) -> JSON
    {
        let usesDictionary = options.languageCorrection && !plan.isUnspaced
        let strength = ReadingStrength(first, usesDictionary: usesDictionary)
        var fields: [(String, JSON)] = [("weak_share", .rounded(strength.weakShare, places: 3)),
                                        ("weak_lines", JSON(strength.weakLines.filter { $0 }.count)),
                                        ("lines", JSON(strength.weakLines.count))]
        let inkWithoutText = strength.hasFewWords && Self.hasInk(image)
        guard strength.isWeak || inkWithoutText else {
            return .object([("read", false)] + fields)
        }
        if inkWithoutText { fields.append(("ink_without_text", true)) }

        // The lines whose reading may still be bettered: weak at first and not confirmed by a same-text reading. A
        // line another variant already bettered stays open, so each keeps the surest of all its readings.
        var progress = SecondReadingProgress(weak: strength.weakLines, open: strength.weakLines)
        let resolution = page.declaredResolution
        do throws(PageFailure) {
            // First the cheap variant, line by line: the other binarization of the page as read. Lines it reads with
            // the same words are weak by what they say, not by how they are printed, and need no further reading.
            let lines = result.lines
            let twoTone = lines.indices.filter { $0 < progress.weak.count && progress.weak[$0] && Self.isTwoTone(image, lines[$0].box) }
            for index in twoTone { progress.weak[index] = false; progress.open[index] = false }
            var otherBinarization: LineRereading?
            if progress.weak.contains(true) {
                let reread = try rereadWeakLines(&result, weak: &progress.weak, open: &progress.open, image: image,
                                                 resolution: resolution, decisions: &progress.decisions)
                otherBinarization = reread
                progress.variants.append(("other_binarization", reread.json))
            } else if !twoTone.isEmpty {
                progress.skipped.append("other_binarization")
            }
            // The page as the file has it, read whole: where the stages hurt a region (faint print flattened away, a
            // shadow's edge taken for ink, a row shrunk below what reads), the file's own pixels read it better. A
            // still-weak share counts the lines read, not those the stages lost (SROIE 495, 480, 360: few lines still
            // weak, rows cut short), so it is skipped only on more evidence (`nothingLost`), or when the stages
            // changed no ink (`sameInk`: it would be the first reading over again). A page only shrunk to the scale
            // target still reads a little differently as decoded (eurotext: "o" read "0" once shrunk).
            let stillWeak = Self.weakShare(of: result, weak: progress.weak)
            fields.append(("still_weak_share", .rounded(stillWeak, places: 3)))
            if let uncorrected = page.uncorrected, options.minTextHeight == nil {
                try readUncorrected(uncorrected, into: &result, progress: &progress, fields: &fields, image: image,
                                    inkWithoutText: inkWithoutText, stillWeak: stillWeak, otherBinarization: otherBinarization,
                                    usesDictionary: usesDictionary, resolution: resolution, options: options, since: start)
            }
            // Print made of dots (dot-matrix receipts and tickets): Tesseract takes each dot for a speck and reads
            // nothing, on the file's pixels as on the corrected page. Darkened by a window as wide as the gaps between
            // the dots, the dots join into strokes that read (SROIE 600: nothing read, 10.5% CER with the dots joined).
            if inkWithoutText {
                try readJoinedDots(page.uncorrected, into: &result, progress: &progress, image: image, resolution: resolution,
                                   options: options, since: start)
            }
            // Scattered text (receipts, labels, forms) that the page layout analysis did not see as text.
            if inkWithoutText {
                let previous = engine.pageSegmentationMode
                engine.pageSegmentationMode = .sparseText
                defer { engine.pageSegmentationMode = previous }
                let reading = try read(image, with: engine, resolution: resolution, options: options, since: start)
                let again = PageResult(reading, resolution: resolution)
                progress.variants.append(("sparse", adopt(again, into: &result, weak: &progress.weak, open: &progress.open,
                                                          variant: "sparse", decisions: &progress.decisions)))
            }
        } catch {
            // Out of time or an engine error: the page keeps what it has, the first reading where nothing was surer.
            fields.append(("stopped", JSON(error.message)))
        }
        engine.releasePage()
        // Read again is what the findings say only when some variant actually read something.
        fields.insert(("read", JSON(!progress.variants.isEmpty)), at: 0)
        if !progress.skipped.isEmpty { fields.append(("same_image", .array(progress.skipped))) }
        if !progress.nothingLost.isEmpty { fields.append(("nothing_lost", .array(progress.nothingLost))) }
        if !progress.decisions.isEmpty { result.text = Self.text(of: result) }
        if !progress.variants.isEmpty { fields.append(("variants", .object(progress.variants))) }
        fields.append(("regions", .array(progress.decisions.prefix(100).map { decision in
            .object([("box", decision.box.json), ("variant", JSON(decision.variant))]
                    + (decision.added ? [("added", true)] : []))
        })))
        return .object(fields)
    }

    /// The page as decoded, read whole, each row of the page keeping the surer of the two readings
    /// (`chooseRegions`); skipped when the stages changed no ink, or when the first reading lost nothing.
    private func readUncorrected(_ uncorrected: UncorrectedImage, into result: inout PageResult,
                                 progress: inout SecondReadingProgress, fields: inout [(String, JSON)], image: Pix,
                                 inkWithoutText: Bool, stillWeak: Double, otherBinarization: LineRereading?,
                                 usesDictionary: Bool, resolution: Int, options: RecognitionOptions,
                                 since start: UInt64) throws(PageFailure) {
        let change = Self.inkChange(uncorrected, on: image)
        if let change { fields.append(("ink_changed", .rounded(change, places: 4))) }
        // A page whose weak lines the other binarization mostly read with the same words, whose weak share
        // it brought below the page's limit, and whose reading covers its letters is weak by what it says:
        // the stages lost nothing there for the file's pixels to find (`nothingLost`).
        let lines = result.lines.filter { !$0.words.isEmpty }.map(\.box)
        let lost = change.map { $0 <= Self.sameInk } == true ? nil
            : LostInk(uncorrected.image, toPage: uncorrected.toPage, lines: lines, width: result.width, height: result.height)
        if let lost { fields.append(("lost_ink", .rounded(lost.share, places: 3))) }
        if let change, change <= Self.sameInk {
            progress.skipped.append("uncorrected")
        } else if let lost, !inkWithoutText,
                  Self.nothingLost(lost, stillWeak: stillWeak, otherBinarization: otherBinarization) {
            progress.nothingLost.append("uncorrected")
        } else {
            let scale = Self.linearScale(uncorrected.toPage)
            let reading = try read(uncorrected.image, with: engine,
                                   resolution: resolution > 0 ? Int((Double(resolution) / scale).rounded()) : 0,
                                   options: options, since: start)
            let again = PageResult(reading, resolution: resolution)
                .linesOnPage(through: uncorrected.toPage, width: result.width, height: result.height)
            progress.variants.append(("uncorrected", chooseRegions(again, into: &result, weak: &progress.weak, open: &progress.open,
                                                                   usesDictionary: usesDictionary, variant: "uncorrected",
                                                                   decisions: &progress.decisions)))
        }
    }

    /// Dot-matrix print joined into strokes (the file's pixels, else the page, darkened by a `dotGap` window) and
    /// read: a reading with more confident words than the first has words at all replaces it, else its lines are
    /// adopted.
    private func readJoinedDots(_ source: UncorrectedImage?, into result: inout PageResult,
                                progress: inout SecondReadingProgress, image: Pix, resolution: Int,
                                options: RecognitionOptions, since start: UInt64) throws(PageFailure) {
        let joined: Pix
        do throws(LeptonicaError) {
            joined = try (source?.image ?? image).erodedGray(width: Self.dotGap, height: Self.dotGap)
        } catch {
            throw PageFailure(stage: Self.stage, code: .internalError, message: "joined dots: \(error.description)")
        }
        let scale = source.map { Self.linearScale($0.toPage) } ?? 1
        let reading = try read(joined, with: engine,
                               resolution: resolution > 0 ? Int((Double(resolution) / scale).rounded()) : 0,
                               options: options, since: start)
        var again = PageResult(reading, resolution: resolution)
        if let source { again = again.linesOnPage(through: source.toPage, width: result.width, height: result.height) }
        // The first reading found next to nothing, and what it found (a speck read as a word whose box spans
        // the page) must not keep the new reading's lines out: a reading with more confident words than the
        // first has words at all replaces it.
        let confident = again.words.filter { $0.confidence >= Self.addedLineConfidence }.count
        if confident > result.words.count {
            result.blocks = again.blocks
            progress.weak = again.lines.map { $0.confidence < ReadingStrength.weakConfidence }
            progress.open = progress.weak
            progress.decisions.append(SecondReadingDecision(box: Rect(x: 0, y: 0, width: result.width, height: result.height),
                                                            variant: "joined_dots", added: false))
            progress.variants.append(("joined_dots", .object([("replaced_page", true), ("confident_words", JSON(confident))])))
        } else {
            progress.variants.append(("joined_dots", adopt(again, into: &result, weak: &progress.weak, open: &progress.open,
                                                           variant: "joined_dots", decisions: &progress.decisions)))
        }
    }

    /// Takes from `other` (a whole-page reading in the page's coordinates) each open line it read with a higher
    /// confidence, and each confident line that overlaps no word of the first reading.
    private func adopt(_ other: PageResult, into result: inout PageResult, weak: inout [Bool], open: inout [Bool],
                       variant: String,
                       decisions: inout [SecondReadingDecision]) -> JSON
    {
        let others = other.lines.filter { !$0.words.isEmpty }
        var replaced = 0
        var index = 0
        result.updateLines { line in
            defer { index += 1 }
            guard index < open.count, open[index],
                  let best = others.max(by: { line.box.overlapRatio($0.box) < line.box.overlapRatio($1.box) }),
                  line.box.overlapRatio(best.box) >= 0.5, best.confidence > line.confidence + Self.surerMargin else { return }
            line.words = best.words
            weak[index] = best.confidence < ReadingStrength.weakConfidence
            decisions.append(SecondReadingDecision(box: line.box, variant: variant, added: false))
            replaced += 1
        }
        let added = Self.addMissedLines(others, to: &result, weak: &weak, open: &open, variant: variant, decisions: &decisions)
        return .object([("replaced", JSON(replaced)), ("added", JSON(added))])
    }

    /// Appends to `result`, each as a block of its own, the lines of `others` the first reading missed: confident,
    /// with a word of two letters or digits, and overlapping no word already read. Returns how many.
    static func addMissedLines(_ others: [Line], to result: inout PageResult, weak: inout [Bool], open: inout [Bool],
                               variant: String, decisions: inout [SecondReadingDecision]) -> Int
    {
        let words = result.words.map(\.box)
        let added = others.filter { isMissedLine($0, over: words) }
        for line in added {
            result.blocks.append(Block(box: line.box, kind: BlockKind.text.rawValue,
                                       paragraphs: [Paragraph(box: line.box, lines: [line])]))
            weak.append(false)
            open.append(false)
            decisions.append(SecondReadingDecision(box: line.box, variant: variant, added: true))
        }
        return added.count
    }

    /// Whether `line`, read only by another reading, may be added beside `read` (boxes of words already read):
    /// confident, with a word of two letters or digits, and overlapping none of them.
    static func isMissedLine(_ line: Line, over read: [Rect]) -> Bool {
        line.confidence >= addedLineConfidence
            && line.words.contains { $0.text.filter { $0.isLetter || $0.isNumber }.count >= 2 }
            && !read.contains { $0.coverage(of: line.box) > 0.3 || line.box.coverage(of: $0) > 0.3 }
    }

    /// How sure a reading of some words is, in characters: each letter or digit counts for it in proportion to how
    /// far its word's confidence is above even odds (50), and against it as far as it is below. A reading that
    /// drops text has fewer characters to count, one that reads noise counts it against itself.
    static func sureness(_ words: some Sequence<Word>) -> Double {
        words.reduce(0) { sum, word in
            sum + Double(word.text.filter { $0.isLetter || $0.isNumber }.count) * (word.confidence - 50) / 50
        }
    }

    /// The share of words two readings of a region must have in common (`agreement`) to be taken for readings of the
    /// same print.
    static let agreeingShare = 0.5

    /// The share of the words of the reading with fewer words that the other reading also has (as a multiset; words
    /// compared by their letters and digits, case folded; only words of two such characters or more count). 0 when
    /// either reading has fewer than two such words: one word read alike is no evidence.
    static func agreement(_ a: [Word], _ b: [Word]) -> Double {
        func counted(_ words: [Word]) -> [String: Int] {
            var counts: [String: Int] = [:]
            for word in words {
                let key = String(word.text.filter { $0.isLetter || $0.isNumber }).lowercased()
                if key.count >= 2 { counts[key, default: 0] += 1 }
            }
            return counts
        }
        let x = counted(a), y = counted(b)
        let smaller = min(x.values.reduce(0, +), y.values.reduce(0, +))
        guard smaller >= 2 else { return 0 }
        let common = x.reduce(0) { $0 + min($1.value, y[$1.key] ?? 0) }
        return Double(common) / Double(smaller)
    }

    /// Takes from `other` (a whole-page reading of another picture of the page, in the page's coordinates) each
    /// region it read surer than the first reading. The two readings may cut the same print into lines differently
    /// (a row split in two, a column read as its own block, a line lost), so lines are not matched one to one: a
    /// region is a group of lines of both readings that share a row (they overlap horizontally and by more than
    /// half the lower one's height vertically, transitively), and it keeps the lines of the reading whose words are
    /// surer all together (`sureness`), provided the other reading has more characters in strong lines (lines not
    /// weak by `ReadingStrength.isWeak`) than the first has in the region, or the two agree on most of the region's
    /// words (`agreement`: then both read the same print, and the surer one reads it better). Of two readings weak
    /// throughout that do not agree, the engine's confidence picks the one it happens to rate higher: that is no
    /// better text (an upside-down page read as it lies, a photo's background), and it would raise the very figures
    /// (the page's confidence and quality figure) that tell a user the page is garbled. Strong lines the first
    /// reading lacked are evidence of their own.
    /// Lines of `other` that share no row with a line of the first reading are added when they are confident and
    /// overlap no word already read.
    func chooseRegions(_ other: PageResult, into result: inout PageResult, weak: inout [Bool], open: inout [Bool],
                       usesDictionary: Bool, variant: String, decisions: inout [SecondReadingDecision]) -> JSON
    {
        let firstLines = result.lines
        let others = other.lines.filter { !$0.words.isEmpty }
        let count = firstLines.count + others.count
        // Union-find over the lines of both readings: first lines 0..<n, others after them.
        var parent = Array(0..<count)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        func shareRow(_ a: Rect, _ b: Rect) -> Bool {
            let across = min(a.maxX, b.maxX) - max(a.x, b.x)
            let down = min(a.maxY, b.maxY) - max(a.y, b.y)
            return across > 0 && down > 0 && 2 * down > min(a.height, b.height)
        }
        for (i, line) in firstLines.enumerated() where !line.words.isEmpty {
            for (j, again) in others.enumerated() where shareRow(line.box, again.box) {
                let a = root(i), b = root(firstLines.count + j)
                if a != b { parent[a] = b }
            }
        }
        var members: [Int: (first: [Int], other: [Int])] = [:]
        for i in firstLines.indices where !firstLines[i].words.isEmpty { members[root(i), default: ([], [])].first.append(i) }
        for j in others.indices { members[root(firstLines.count + j), default: ([], [])].other.append(j) }
        // Each region the other reading wins: its first lines go, its other lines take the place of the first one.
        var replacement: [Int: [Line]] = [:]
        var dropped: Set<Int> = []
        var replaced = 0
        for (_, group) in members.sorted(by: { $0.key < $1.key }) where !group.first.isEmpty && !group.other.isEmpty {
            let first = group.first.flatMap { firstLines[$0].words }
            let theirWords = group.other.flatMap { others[$0].words }
            // Strong text the first reading lacked, by the lines' own measure: of two readings weak throughout,
            // neither is evidence for itself. Text is letters and digits (as `sureness` counts it): a line of blanks
            // or marks read over a picture brings none.
            func strongCharacters(_ lines: [Line]) -> Int {
                lines.filter { !ReadingStrength.isWeak($0.words, usesDictionary: usesDictionary) }
                    .reduce(0) { $0 + $1.words.reduce(0) { $0 + $1.text.filter { $0.isLetter || $0.isNumber }.count } }
            }
            // Or the two readings agree: most words of the shorter one are read alike by the other. Two readings of the
            // same print agree on most of its words whatever language it is in (a receipt's Malay item names are in no
            // dictionary, and so never strong); two readings of garble rarely agree on any.
            guard strongCharacters(group.other.map { others[$0] }) > strongCharacters(group.first.map { firstLines[$0] })
                    || Self.agreement(first, theirWords) >= Self.agreeingShare
            else { continue }
            let mine = Self.sureness(first), theirs = Self.sureness(theirWords)
            // Surer by more than the readings of the same print differ by: `surerMargin` points on each character.
            let characters = first.reduce(0) { $0 + $1.text.filter { $0.isLetter || $0.isNumber }.count }
            guard theirs > mine + Double(characters) * Self.surerMargin / 50 else { continue }
            let lines = group.other.map { others[$0] }.sorted { ($0.box.y, $0.box.x) < ($1.box.y, $1.box.x) }
            let at = group.first.min()!
            replacement[at] = lines
            for index in group.first where index != at { dropped.insert(index) }
            for line in lines { decisions.append(SecondReadingDecision(box: line.box, variant: variant, added: false)) }
            replaced += 1
        }
        if replaced > 0 {
            var index = 0
            var newWeak: [Bool] = [], newOpen: [Bool] = []
            for b in result.blocks.indices {
                for p in result.blocks[b].paragraphs.indices {
                    var lines: [Line] = []
                    for line in result.blocks[b].paragraphs[p].lines {
                        defer { index += 1 }
                        if let chosen = replacement[index] {
                            lines += chosen
                            for line in chosen {
                                newWeak.append(line.confidence < ReadingStrength.weakConfidence)
                                newOpen.append(false)
                            }
                        } else if !dropped.contains(index) {
                            lines.append(line)
                            newWeak.append(index < weak.count && weak[index])
                            newOpen.append(index < open.count && open[index])
                        }
                    }
                    result.blocks[b].paragraphs[p].lines = lines
                }
            }
            weak = newWeak
            open = newOpen
        }
        let grouped = Set(members.values.filter { !$0.first.isEmpty }.flatMap(\.other))
        let added = Self.addMissedLines(others.indices.filter { !grouped.contains($0) }.map { others[$0] }, to: &result,
                                        weak: &weak, open: &open, variant: variant, decisions: &decisions)
        return .object([("regions_replaced", JSON(replaced)), ("added", JSON(added))])
    }

    /// Reads each line still weak alone (one text line) with the other binarization, and keeps the surer reading. A
    /// line read with the same words is weak no more for the variants after this one: a picture thresholded another
    /// way that reads the same says the words are what is printed.
    private func rereadWeakLines(_ result: inout PageResult, weak: inout [Bool], open: inout [Bool], image: Pix, resolution: Int,
                                 decisions: inout [SecondReadingDecision]) throws(PageFailure) -> LineRereading
    {
        let lines = result.lines
        let chosen = lines.indices.filter { $0 < weak.count && weak[$0] && !lines[$0].words.isEmpty }
            .prefix(Self.maximumRereadLines)
        guard !chosen.isEmpty else { return LineRereading(read: 0, replaced: 0, same: 0) }
        let boxes = chosen.map { index in
            let box = lines[index].box
            let pad = max(2, box.height / 6)
            let x0 = max(0, box.x - pad), y0 = max(0, box.y - pad)
            return Leptonica.Box(x: x0, y: y0, width: min(image.width, box.maxX + pad) - x0,
                                 height: min(image.height, box.maxY + pad) - y0)
        }
        let previous = try useOtherBinarization()
        defer { restoreBinarization(previous) }
        let reader = engine
        // The first few lines are a sample: when every one of them reads the same words, the page is weak by what it
        // says, and the rest of its weak lines are taken to be so too (read no further, here or whole).
        let sample = min(Self.sampleLines, boxes.count)
        var readings = reader.recognize(image, regions: Array(boxes.prefix(sample)), mode: .singleLine,
                                        resolution: resolution > 0 ? resolution : nil)
        let sampleSame = sample < boxes.count && zip(chosen, readings).allSatisfy { index, reading in
            guard let reading else { return false }
            let read = PageResult(reading, resolution: resolution).lines.filter { !$0.words.isEmpty }
            return read.count == 1 && read[0].words.map(\.text) == lines[index].words.map(\.text)
        }
        if sampleSame {
            for index in chosen { weak[index] = false; open[index] = false }
        } else if sample < boxes.count {
            readings += reader.recognize(image, regions: Array(boxes.dropFirst(sample)), mode: .singleLine,
                                         resolution: resolution > 0 ? resolution : nil)
        }
        var replacements: [Int: [Word]] = [:]
        var same = 0
        for (index, reading) in zip(chosen, readings) {
            guard let reading else { continue }
            let again = PageResult(reading, resolution: resolution).lines.filter { !$0.words.isEmpty }
            guard again.count == 1, let line = again.first else { continue }
            if line.words.map(\.text) == lines[index].words.map(\.text) {
                weak[index] = false
                open[index] = false
                same += 1
            } else if line.confidence > lines[index].confidence + Self.surerMargin {
                replacements[index] = line.words
                weak[index] = line.confidence < ReadingStrength.weakConfidence
                decisions.append(SecondReadingDecision(box: lines[index].box, variant: "other_binarization", added: false))
            }
        }
        var index = 0
        result.updateLines { line in
            defer { index += 1 }
            if let words = replacements[index] { line.words = words }
        }
        return LineRereading(read: readings.count, replaced: replacements.count, same: same, stoppedAfterSample: sampleSame)
    }

    /// The share of the page's characters in lines flagged weak.
    static func weakShare(of result: PageResult, weak: [Bool]) -> Double {
        var total = 0, weakTotal = 0
        for (index, line) in result.lines.enumerated() {
            let characters = line.words.map { max(1, $0.text.count) }.reduce(0, +)
            total += characters
            if index < weak.count && weak[index] { weakTotal += characters }
        }
        return total > 0 ? Double(weakTotal) / Double(total) : 0
    }

    /// How much of the ink the correction stages changed, as a share of the dark pixels of either image (pixels
    /// on the other side of mid-gray after the stages, the page as decoded brought to the page's size): nil when the
    /// stages moved the page (turned, deskewed, rectified, dewarped), which no comparison of pixels can undo cheaply.
    /// A change of scale alone is undone first: the scale stage picked the page's size from its own text, and the
    /// same pixels at the size the file has them are no different picture of the print.
    static func inkChange(_ uncorrected: UncorrectedImage, on image: Pix) -> Double? {
        let h = uncorrected.toPage.m
        guard h[1] == 0, h[3] == 0, h[2] == 0, h[5] == 0, h[6] == 0, h[7] == 0 else { return nil }
        var original = uncorrected.image
        if original === image { return 0 }
        if original.width != image.width || original.height != image.height {
            // As the scale stage made the page, so the two differ by the stages' other changes only.
            guard let resampled = try? original.resampled(by: h[0]) else { return nil }
            original = resampled.width == image.width && resampled.height == image.height ? resampled
                : (try? resampled.scaled(toWidth: image.width, height: image.height)) ?? resampled
            guard original.width == image.width, original.height == image.height else { return nil }
        }
        guard let a = try? original.grayPixels(), let b = try? image.grayPixels() else { return nil }
        var ink = 0, flipped = 0
        for i in 0..<a.data.count {
            let darkA = a.data[i] < 128, darkB = b.data[i] < 128
            if darkA || darkB { ink += 1 }
            if darkA != darkB { flipped += 1 }
        }
        return ink > 0 ? Double(flipped) / Double(ink) : 0
    }

    /// Whether the pixels of `box` take at most two values (a bilevel scan, a page drawn in black on white): every
    /// binarization, global or local, then gives the same picture of it.
    static func isTwoTone(_ image: Pix, _ box: Rect) -> Bool {
        if image.depth == 1 { return true }
        guard box.width > 0, box.height > 0,
              let band = try? image.cropped(to: Leptonica.Box(x: box.x, y: box.y, width: box.width, height: box.height)),
              let pixels = try? band.grayPixels() else { return false }
        var values: Set<UInt8> = []
        for value in pixels.data {
            values.insert(value)
            if values.count > 2 { return false }
        }
        return true
    }

    /// Whether an image with (almost) no text read has marks the size of letters: dark components between 0.4% and
    /// 10% of the page's height.
    static func hasInk(_ image: Pix) -> Bool {
        guard let binary = try? image.luminance().binarized(), let boxes = try? binary.componentBoxes(grownBy: 1, 1) else {
            return false
        }
        let low = max(3, image.height / 500), high = max(low + 1, image.height / 10)
        return boxes.filter { (low...high).contains($0.height) && $0.width <= image.width / 2 }.count >= 10
    }

    /// How much a mostly similar transform enlarges lengths (the square root of its linear part's determinant).
    static func linearScale(_ h: Homography) -> Double {
        let determinant = abs(h.m[0] * h.m[4] - h.m[1] * h.m[3])
        return determinant > 1e-9 ? determinant.squareRoot() : 1
    }
}

extension Rect {
    /// The share of `other`'s area inside this rectangle.
    func coverage(of other: Rect) -> Double {
        let w = min(maxX, other.maxX) - max(x, other.x), h = min(maxY, other.maxY) - max(y, other.y)
        guard w > 0, h > 0, other.width > 0, other.height > 0 else { return 0 }
        return Double(w * h) / Double(other.width * other.height)
    }

    /// The bounding box of this rectangle's corners mapped through `h`, kept inside `width` × `height`.
    func mapped(through h: Homography, width: Int, height: Int) -> Rect {
        let corners = [Point(Double(x), Double(y)), Point(Double(maxX), Double(y)),
                       Point(Double(maxX), Double(maxY)), Point(Double(x), Double(maxY))].map(h.apply)
        let left = max(0, min(width, Int(corners.map(\.x).min()!.rounded(.down))))
        let top = max(0, min(height, Int(corners.map(\.y).min()!.rounded(.down))))
        let right = max(left, min(width, Int(corners.map(\.x).max()!.rounded(.up))))
        let bottom = max(top, min(height, Int(corners.map(\.y).max()!.rounded(.up))))
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The share of the bounding box of this rectangle's corners mapped through `h` that lies inside `width` ×
    /// `height` (0 when a corner lies on or beyond the horizon of a perspective, where it maps to no point of the page).
    func shareOnPage(through h: Homography, width: Int, height: Int) -> Double {
        let points = [Point(Double(x), Double(y)), Point(Double(maxX), Double(y)),
                      Point(Double(maxX), Double(maxY)), Point(Double(x), Double(maxY))]
        guard points.allSatisfy({ h.m[6] * $0.x + h.m[7] * $0.y + h.m[8] > 0 }) else { return 0 }
        let corners = points.map(h.apply)
        guard corners.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return 0 }
        let left = corners.map(\.x).min()!, right = corners.map(\.x).max()!
        let top = corners.map(\.y).min()!, bottom = corners.map(\.y).max()!
        let area = (right - left) * (bottom - top)
        guard area > 0 else { return 0 }
        let inside = max(0, min(right, Double(width)) - max(left, 0)) * max(0, min(bottom, Double(height)) - max(top, 0))
        return inside / area
    }
}

extension PageResult {
    /// The same reading with every box mapped through `h` into a `width` × `height` image.
    func boxesMapped(through h: Homography, width: Int, height: Int) -> PageResult {
        boxesTransformed(width: width, height: height) { $0.mapped(through: h, width: width, height: height) }
    }

    /// The lines of this reading (of the page as the file has it) that lie on the corrected page, mapped onto it
    /// through `h` (`boxesMapped`). A line lies on the page when most of its mapped box is inside the page: on a
    /// photo the file also shows the table the page lies on, whose marks map outside the rectified page (clipped to
    /// its edge, such a line's box would take in a strip of the page it never read), and a line near the photo's
    /// horizon maps to a box far larger than the page.
    func linesOnPage(through h: Homography, width: Int, height: Int) -> PageResult {
        var kept = self
        kept.removeLines { 2 * $0.box.shareOnPage(through: h, width: width, height: height) <= 1 }
        return kept.boxesMapped(through: h, width: width, height: height)
    }
}
