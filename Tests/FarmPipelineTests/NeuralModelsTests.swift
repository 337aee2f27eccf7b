import Testing
import FarmCore
@testable import FarmPipeline
import FarmRuntime
import TestSupport

/// Finding the neural engine's install.
@Suite("Neural models located")
struct NeuralModelsTests {
    @Test("the installed models are found (a machine without them fails: install them with Scripts/install-neural)")
    func installed() throws {
        let models = try NeuralModels.locate()
        #expect(models.missingFiles.isEmpty)
        #expect(FileSystem.exists(models.recognizerPath))
    }

    @Test("OCRFARM_NEURAL_DIR replaces the default folders; the error names the file, the folders and the installer")
    func missing() throws {
        let folder = TemporaryDirectory("ocrfarm-neural")
        _ = folder.write(NeuralModels.runtimeFile, text: "not a library")
        do {
            _ = try NeuralModels.locate(environment: ["OCRFARM_NEURAL_DIR": folder.path, "HOME": "/nonexistent"])
            Issue.record("a folder without the models was accepted")
        } catch {
            #expect(error.missingFile == NeuralModels.detectorFile)
            #expect(error.searched == [folder.path])
            #expect(error.description.contains(NeuralModels.detectorFile))
            #expect(error.description.contains(folder.path))
            #expect(error.description.contains("install it with Scripts/install-neural (Debian and PyPI only)"))
        }
        #expect(!error(locating: folder.path).nothingInstalled, "one file there is an install in part")
        #expect(error(locating: folder.file("none")).nothingInstalled)
        #expect(NeuralModels.folders(environment: ["HOME": "/home/x"])
                == [NeuralModels.systemFolder, "/home/x/.local/share/ocrfarm/neural"])
    }

    /// The error locating the models in `folder` alone gives.
    func error(locating folder: String) -> NeuralModelsError {
        do throws(NeuralModelsError) {
            _ = try NeuralModels.locate(environment: ["OCRFARM_NEURAL_DIR": folder, "HOME": "/nonexistent"])
            Issue.record("models found in \(folder)")
            return NeuralModelsError(missingFile: "", searched: [])
        } catch {
            return error
        }
    }
}
