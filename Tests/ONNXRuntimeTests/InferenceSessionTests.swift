import Foundation
@testable import ONNXRuntime
import Synchronization
import Testing
import TestSupport

@Suite("ONNX Runtime: sessions, metadata, errors, threads")
struct InferenceSessionTests {
    let folder = TemporaryDirectory("onnxruntime-test")

    @Test("the recognizer's dictionary is its metadata key 'character', one symbol a line")
    func recognizerDictionary() throws {
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.recognizer))
        let dictionary = try #require(session.metadata("character"))
        // Python: 18708 lines ('\n'-separated, none trailing), 37415 code points.
        let lines = dictionary.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        #expect(lines.count == 18708)
        #expect(dictionary.unicodeScalars.count == 37415)
        #expect(lines.first.map { String(decoding: $0, as: UTF8.self) } == "!")
        #expect(lines.last.map { String(decoding: $0, as: UTF8.self) } == "🛅")
        #expect(session.metadata("no such key") == nil)
        let classifier = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                              modelPath: try NeuralInstall.model(NeuralInstall.classifier))
        #expect(classifier.metadata("character") == nil)
    }

    @Test("a missing library is libraryMissing, naming the path")
    func missingLibrary() {
        let path = folder.file("libonnxruntime.so.1.32.0")
        #expect {
            _ = try ONNXRuntime.load(libraryPath: path)
        } throws: { error in
            guard let error = error as? ONNXRuntimeError else { return false }
            return error.kind == .libraryMissing && error.message.contains(path)
        }
    }

    @Test("a library that is not ONNX Runtime is symbolMissing")
    func notONNXRuntime() throws {
        // Any shared library without OrtGetApiBase: the C library every process has.
        #expect {
            _ = try ONNXRuntime.load(libraryPath: "libc.so.6")
        } throws: { error in
            (error as? ONNXRuntimeError)?.kind == .symbolMissing
        }
    }

    @Test("versions: 1.8 and later 1.x are taken; older ones and 2.x are not")
    func versions() {
        #expect(ONNXRuntime.isSupported("1.32.0"))
        #expect(ONNXRuntime.isSupported("1.8.0"))
        #expect(!ONNXRuntime.isSupported("1.7.2"))
        #expect(!ONNXRuntime.isSupported("2.0.0"))
        #expect(!ONNXRuntime.isSupported(""))
        #expect(!ONNXRuntime.isSupported("banana"))
    }

    @Test("a missing or garbage model file is modelUnreadable, naming the file")
    func unreadableModels() throws {
        let runtime = try NeuralInstall.runtime()
        let missing = folder.file("missing.onnx")
        let garbage = folder.write("garbage.onnx", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        let empty = folder.write("empty.onnx", [])
        for path in [missing, garbage, empty] {
            #expect {
                _ = try InferenceSession(runtime: runtime, modelPath: path)
            } throws: { error in
                guard let error = error as? ONNXRuntimeError else { return false }
                // ONNX Runtime's own reason follows the path ("… failed:No graph was found in the protobuf.").
                return error.kind == .modelUnreadable && error.message.contains(path) && error.code != nil
            }
        }
    }

    @Test("a tensor whose shape does not fit its values is refused before ONNX Runtime reads it")
    func shapeMismatch() throws {
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.classifier))
        let refused: [Tensor] = [
            Tensor(shape: [1, 3, 48, 192], values: [Float](repeating: 0, count: 10)),
            Tensor(shape: [1, 3, 48, 192], values: [Float](repeating: 0, count: 3 * 48 * 192 + 1)),
            Tensor(shape: [1, -3, 48, 192], values: [Float](repeating: 0, count: 3 * 48 * 192)),
            Tensor(shape: [Int.max, 4, 1, 1], values: [0, 0, 0, 0]),
            Tensor(shape: [0, 3, 48, 192], values: []),
        ]
        for tensor in refused {
            #expect {
                _ = try session.run(tensor)
            } throws: { error in
                guard let error = error as? ONNXRuntimeError else { return false }
                // Found here, not by ONNX Runtime: no OrtErrorCode.
                return error.kind == .runtime && error.code == nil && error.message.contains("\(tensor.shape)")
            }
        }
        // The session is still usable after refusals.
        let output = try session.run(try GoldenInput.classifierBatch())
        #expect(output.shape == [4, 2])
    }

    @Test("an input of the wrong rank is ONNX Runtime's own error, its message kept")
    func wrongRank() throws {
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.classifier))
        let tensor = Tensor(shape: [3, 48, 192], values: [Float](repeating: 0, count: 3 * 48 * 192))
        #expect {
            _ = try session.run(tensor)
        } throws: { error in
            guard let error = error as? ONNXRuntimeError else { return false }
            // Python: "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid rank for input: x Got: 3 Expected: 4 …"
            return error.kind == .runtime && error.code == 2 && error.message.contains("Invalid rank for input: x")
                && error.message.contains("Got: 3 Expected: 4")
        }
    }

    @Test("session options: other thread and arena settings give the same answer; a negative thread count is refused")
    func options() throws {
        var options = SessionOptions()
        options.intraOpThreads = 2
        options.cpuMemoryArena = true
        let session = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                           modelPath: try NeuralInstall.model(NeuralInstall.classifier), options: options)
        let output = try session.run(try GoldenInput.classifierBatch())
        #expect(abs(output.values[4] - 0.117567) < 1e-4)
        options.intraOpThreads = -1
        #expect {
            _ = try InferenceSession(runtime: try NeuralInstall.runtime(),
                                     modelPath: try NeuralInstall.model(NeuralInstall.classifier), options: options)
        } throws: { error in
            (error as? ONNXRuntimeError)?.message.contains("-1 intra-op") == true
        }
    }

    @Test("the option setters at positions 13 and 23 are the ones named: their refusals of a bad value say so")
    func optionSetterPositions() throws {
        // Outputs do not show which setter ran (sequential mode and full optimization are also close to the
        // defaults), so ask each for a value only it checks, and read ONNX Runtime's own words back.
        let api = try NeuralInstall.runtime().api
        var created: OpaquePointer?
        try api.check(api.createSessionOptions(&created), .runtime, "CreateSessionOptions")
        let options = try #require(created)
        defer { api.releaseSessionOptions(options) }
        func refusal(_ status: OpaquePointer?) -> String? {
            do throws(ONNXRuntimeError) { try api.check(status, .runtime, "") } catch { return error.message }
            return nil
        }
        #expect(refusal(api.setSessionExecutionMode(options, 7))?.contains("execution_mode") == true)
        #expect(refusal(api.setSessionGraphOptimizationLevel(options, -1))?.contains("graph_optimization_level") == true)
        #expect(refusal(api.setSessionExecutionMode(options, OrtConstant.sequential)) == nil)
        #expect(refusal(api.setSessionGraphOptimizationLevel(options, OrtConstant.enableAll)) == nil)
    }

    @Test("two sessions on two threads at once give what one session gives")
    func twoThreads() throws {
        let runtime = try NeuralInstall.runtime()
        let model = try NeuralInstall.model(NeuralInstall.detector)
        let input = try GoldenInput.detectorInput()
        let alone = try InferenceSession(runtime: runtime, modelPath: model).run(input)

        let results = Mutex<[Int: Result<Tensor, ONNXRuntimeError>]>([:])
        let ready = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for slot in 0..<2 {
            ready.enter()
            done.enter()
            // Each slot thread makes its own session and runs it several times, both at once.
            let thread = Thread {
                let session = Result { () throws(ONNXRuntimeError) in try InferenceSession(runtime: runtime, modelPath: model) }
                ready.leave()
                start.wait()
                let outcome = session.flatMap { session in
                    Result { () throws(ONNXRuntimeError) -> Tensor in
                        var last = try session.run(input)
                        for _ in 0..<3 { last = try session.run(input) }
                        return last
                    }
                }
                results.withLock { $0[slot] = outcome }
                done.leave()
            }
            thread.start()
        }
        ready.wait()
        start.signal()
        start.signal()
        done.wait()
        let outputs = results.withLock { $0 }
        #expect(outputs.count == 2)
        for slot in 0..<2 {
            let output = try #require(try outputs[slot]?.get())
            #expect(output.shape == alone.shape)
            #expect(output.values == alone.values, "slot \(slot) differs from the session alone")
        }
    }
}
