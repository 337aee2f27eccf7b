import FarmCore
import FarmRuntime

/// Why the neural models could not be found.
public struct NeuralModelsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The first file that is missing.
    public let missingFile: String
    /// The folders looked in, in order.
    public let searched: [String]
    /// Whether none of the engine's files is in any folder looked in: the engine is not installed at all (`auto`
    /// then reads with Tesseract), rather than installed in part (an error whatever the engine).
    public var nothingInstalled: Bool = false

    public var description: String {
        "the neural reading engine's \(missingFile) is missing (looked in \(searched.joined(separator: ", "))): "
            + "install it with Scripts/install-neural (Debian and PyPI only)"
    }
}

/// Where the neural reading engine's files are: the ONNX Runtime library and PP-OCRv6-small's detector,
/// recognizer and line classifier, PP-OCRv6-tiny's recognizer and its dictionary, all in one folder. Only paths: nothing is loaded here.
public struct NeuralModels: Sendable, Equatable {
    /// The environment variable naming the folder (it replaces the default folders).
    public static let environmentKey = "OCRFARM_NEURAL_DIR"
    /// The folder `Scripts/install-neural` installs to for everyone.
    public static let systemFolder = "/usr/local/lib/ocrfarm/neural"
    /// The ONNX Runtime release the engine is written for (its C API is called by position).
    public static let runtimeVersion = "1.32.0"
    public static let runtimeFile = "libonnxruntime.so.\(runtimeVersion)"
    public static let detectorFile = "PP-OCRv6_det_small.onnx"
    public static let recognizerFile = "PP-OCRv6_rec_small.onnx"
    public static let classifierFile = "ch_ppocr_mobile_v2.0_cls_mobile.onnx"
    /// PP-OCRv6-tiny's recognizer, which reads each line first (`NeuralRecognizer`), and its dictionary: the model
    /// carries none in its metadata; the file has one symbol per line, as the `character` key does.
    public static let quickRecognizerFile = "PP-OCRv6_rec_tiny.onnx"
    public static let quickDictionaryFile = "PP-OCRv6_rec_tiny_dict.txt"
    /// The project's own document mask (issue 39: Training/mask/model/document-mask.onnx, which
    /// `Scripts/install-neural` copies here). Not one of the engine's files: the engine works without it.
    public static let documentMaskFile = "document-mask.onnx"
    /// The models' name in results.
    public static let modelName = "PP-OCRv6-small+tiny"

    public let folder: String
    public var runtimePath: String { folder + "/" + Self.runtimeFile }
    public var detectorPath: String { folder + "/" + Self.detectorFile }
    public var recognizerPath: String { folder + "/" + Self.recognizerFile }
    public var classifierPath: String { folder + "/" + Self.classifierFile }
    public var quickRecognizerPath: String { folder + "/" + Self.quickRecognizerFile }
    public var quickDictionaryPath: String { folder + "/" + Self.quickDictionaryFile }
    public var documentMaskPath: String { folder + "/" + Self.documentMaskFile }

    /// The models in `folder`, unchecked.
    public init(folder: String) {
        self.folder = folder
    }

    /// The folders looked in, in order: `OCRFARM_NEURAL_DIR` alone when it is set, else the system folder, then
    /// `$HOME/.local/share/ocrfarm/neural`.
    public static func folders(environment: [String: String]) -> [String] {
        if let folder = environment[environmentKey], !folder.isEmpty { return [folder] }
        var folders = [systemFolder]
        if let home = environment["HOME"], !home.isEmpty { folders.append(home + "/.local/share/ocrfarm/neural") }
        return folders
    }

    /// The first folder holding every file; the error names the first file missing from the folder that holds
    /// the most of them.
    public static func locate(environment: [String: String] = ProcessEnvironment.current) throws(NeuralModelsError) -> NeuralModels {
        let folders = folders(environment: environment)
        var closest: (missing: [String], folder: String)?
        for folder in folders {
            let models = NeuralModels(folder: folder)
            let missing = models.missingFiles
            if missing.isEmpty { return models }
            if closest == nil || missing.count < closest!.missing.count { closest = (missing, folder) }
        }
        var error = NeuralModelsError(missingFile: closest?.missing.first ?? runtimeFile, searched: folders)
        error.nothingInstalled = closest.map { $0.missing.count == allFiles.count } ?? true
        throw error
    }

    /// Every file of the engine, in the order it loads them.
    static let allFiles = [runtimeFile, detectorFile, recognizerFile, classifierFile, quickRecognizerFile, quickDictionaryFile]

    /// The files that are not in the folder (or are not regular files), in the order the engine loads them.
    public var missingFiles: [String] {
        Self.allFiles.filter { file in
            (try? FileSystem.status(folder + "/" + file).kind) != .file
        }
    }

    /// The engine's name in results, with the runtime's version as it reports it.
    public static func engineName(runtimeVersion: String) -> String { "\(modelName) (onnxruntime \(runtimeVersion))" }
}
