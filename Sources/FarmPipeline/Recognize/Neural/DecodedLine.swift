import FarmCore

/// What the recognizer read on one line crop: its characters, each with the time step where it fired, its
/// probability and the runner-up at that step; split into words with boxes along the crop.
struct DecodedLine: Sendable, Equatable {
    /// One decoded symbol.
    struct Character: Sendable, Equatable {
        var text: String
        /// The time step where the symbol fired first (each step covers `crop width / usedSteps` pixels).
        var step: Int
        var probability: Double
        /// The second likeliest symbol at that step ("" for the blank and the space) and its probability.
        var alternative: String
        var alternativeProbability: Double
    }

    /// A word of the line: its characters' positions in `characters` and its extent along the crop (pixels).
    struct Word: Sendable, Equatable {
        var range: Range<Int>
        var text: String
        var start: Double
        var end: Double
        /// The probability that every character is right: the product of its characters' probabilities, 0–1.
        /// (Their mean, as the line's score has it, sat at 99.5–100 for 70% of a receipt's words, of which 95% were
        /// right, and at 90–93 for words right two times in three; the product is about as true to the share of
        /// words right as Tesseract's own confidence: `Word.confidence`.)
        var confidence: Double
    }

    var characters: [Character]
    /// The number of time steps the recognizer gave for the line's batch.
    var steps: Int

    var text: String { characters.map(\.text).joined() }

    /// The reference pipeline's line score: the mean probability of the characters (0 when none).
    var confidence: Double {
        characters.isEmpty ? 0 : characters.map(\.probability).reduce(0, +) / Double(characters.count)
    }

    /// The words: runs of characters between spaces, split where the text changes between Chinese or Japanese
    /// and other scripts (so the page's text joins them as `Scripts.join` does). `stepWidth` is the width of one
    /// time step in crop pixels and `cropWidth` the crop's width: a character is centred on its step, and a word
    /// reaches half the line's mean character pitch beyond its first and last characters' centres (the reference's
    /// `CalRecBoxes`); neighbouring words that overlap share the overlap.
    func words(stepWidth: Double, cropWidth: Double) -> [Word] {
        var runs: [Range<Int>] = []
        var start: Int?
        for (i, character) in characters.enumerated() {
            let isSpace = character.text.allSatisfy(\.isWhitespace)
            if isSpace {
                if let s = start { runs.append(s..<i); start = nil }
                continue
            }
            if let s = start, isUnspaced(characters[i - 1].text) != isUnspaced(character.text) {
                runs.append(s..<i)
                start = i
            } else if start == nil {
                start = i
            }
        }
        if let s = start { runs.append(s..<characters.count) }
        guard !runs.isEmpty else { return [] }
        // The mean pitch of characters within words of two or more, else the crop shared among the characters.
        let pitches = runs.filter { $0.count > 1 }.map { run in
            Double(characters[run.last!].step - characters[run.first!].step) * stepWidth / Double(run.count - 1)
        }
        let pitch = pitches.isEmpty ? cropWidth / Double(max(1, characters.count)) : pitches.reduce(0, +) / Double(pitches.count)
        var words = runs.map { run in
            let first = (Double(characters[run.first!].step) + 0.5) * stepWidth - pitch / 2
            let last = (Double(characters[run.last!].step) + 0.5) * stepWidth + pitch / 2
            return Word(range: run, text: characters[run].map(\.text).joined(),
                        start: min(max(first, 0), cropWidth), end: min(max(last, 0), cropWidth),
                        confidence: Self.chanceAllRight(characters[run]))
        }
        for i in words.indices.dropLast() where words[i].end > words[i + 1].start {
            let middle = (words[i].end + words[i + 1].start) / 2
            words[i].end = middle
            words[i + 1].start = middle
        }
        return words
    }

    /// The chance that all of `characters` are right: the product of their probabilities (`Word.confidence`).
    static func chanceAllRight(_ characters: some Collection<Character>) -> Double {
        characters.map(\.probability).reduce(1, *)
    }

    /// Other readings of the word at `range`, best first, at most `count`: the word as read, then with each of
    /// its least sure characters replaced by the runner-up at its step (dropped when that is the blank).
    /// Confidences are the word's (`Word.confidence`), 0–100: the product of the characters' probabilities, the
    /// replaced character's taken at its runner-up's.
    func candidates(of range: Range<Int>, count: Int) -> [Candidate] {
        guard count > 0, !range.isEmpty else { return [] }
        let word = Array(characters[range])
        var readings = [Candidate(text: word.map(\.text).joined(), confidence: 100 * Self.chanceAllRight(word))]
        for i in word.indices.sorted(by: { word[$0].probability < word[$1].probability }) where readings.count < count {
            var texts = word.map(\.text)
            texts[i] = word[i].alternative
            let text = texts.joined()
            guard !text.isEmpty, !readings.contains(where: { $0.text == text }) else { continue }
            let others = word.indices.filter { $0 != i }.map { word[$0].probability }.reduce(1, *)
            readings.append(Candidate(text: text, confidence: 100 * others * word[i].alternativeProbability))
        }
        return readings.sorted { $0.confidence > $1.confidence }
    }

    private func isUnspaced(_ text: String) -> Bool { text.unicodeScalars.first.map(Scripts.isUnspaced) ?? false }
}
