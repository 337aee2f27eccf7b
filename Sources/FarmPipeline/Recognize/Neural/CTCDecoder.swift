/// Greedy CTC decoding of the recognizer's output against its dictionary: per time step the likeliest symbol,
/// repeats merged, blanks dropped. Index 0 is the blank, 1…n the dictionary's symbols, n + 1 the space.
struct CTCDecoder: Sendable {
    /// The symbols for indices 1…n, then the space (index n + 1).
    let symbols: [String]

    /// A decoder for `dictionary`, the model's `character` metadata: one symbol per line, split at line feeds
    /// only (a symbol may be a combining mark, which Swift would join to the line feed before it as one
    /// `Character`).
    init(dictionary: String) {
        let lines = dictionary.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        self.init(symbols: lines.map { String(decoding: $0, as: UTF8.self) })
    }

    /// A decoder for the dictionary's `symbols` (the space is added after them).
    init(symbols: [String]) {
        self.symbols = symbols + [" "]
    }

    /// The number of classes the recognizer's output must have: blank, symbols, space.
    var classCount: Int { symbols.count + 1 }

    /// Decodes one line's `steps` × `classCount` probabilities (row-major; the steps over the batch's padding are
    /// decoded too, as the reference does).
    func decode(_ probabilities: UnsafeBufferPointer<Float>, steps: Int) -> DecodedLine {
        let classes = classCount
        precondition(probabilities.count >= steps * classes)
        var characters: [DecodedLine.Character] = []
        var previous = -1
        for step in 0..<steps {
            let row = step * classes
            var best = 0, second = -1
            var bestProbability = probabilities[row], secondProbability: Float = -1
            for c in 1..<classes {
                let p = probabilities[row + c]
                if p > bestProbability {
                    second = best; secondProbability = bestProbability
                    best = c; bestProbability = p
                } else if p > secondProbability {
                    second = c; secondProbability = p
                }
            }
            defer { previous = best }
            guard best != 0, best != previous else { continue }
            characters.append(DecodedLine.Character(
                text: symbols[best - 1], step: step, probability: Double(bestProbability),
                // A space as the runner-up would split the word: as a reading of the word it drops the character.
                alternative: second > 0 && second != classes - 1 ? symbols[second - 1] : "",
                alternativeProbability: Double(max(0, secondProbability))))
        }
        return DecodedLine(characters: characters, steps: steps)
    }
}
