// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "BlocksBridge",
    products: [
        .library(name: "BlocksBridge", targets: ["BlocksBridge"]),
        .executable(name: "bklua", targets: ["bklua"]),
        // The bridge as a Lua C module: scripts/build-module copies libbk.so to bk.so for `require "bk"`.
        .library(name: "bk", type: .dynamic, targets: ["LuaModule"]),
        // BlocksBridge plus the @LuaExport macros. A separate product: only hosts that use the macros
        // build swift-syntax.
        .library(name: "BlocksBridgeExport", targets: ["BlocksBridgeExport"]),
        // bk.XMLParser's parser (libxml2's SAX2 driven as FoundationXML drives it, in C), loaded
        // (dlopen) at the first parse from beside the program or bk.so, so that libxml2 is not
        // loaded at start-up.
        .library(name: "bkxml", type: .dynamic, targets: ["BlocksBridgeXML"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", exact: "0.7.0"),
    ],
    targets: [
        // Lua 5.4 itself, from Debian's liblua5.4-dev (never vendored).
        .systemLibrary(
            name: "CLua",
            path: "Sources/CLua",
            pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"])]
        ),
        // The C side of the boundary: Lua's macros as functions, the error trampoline, the allocator.
        .target(name: "CLuaShim", dependencies: ["CLua"], path: "Sources/CLuaShim"),
        .target(
            name: "BlocksBridge",
            dependencies: ["CLua", "CLuaShim"],
            // Lua chunks kept as .lua files, compiled into the binary as byte arrays
            // (PackageResources.<name>_lua): no bundle at run time, so bk.so works anywhere.
            resources: [
                .embedInCode("Observation/ObservationEngine.lua"),
                .embedInCode("DynamicDelegate/DelegateChunk.lua"),
                .embedInCode("EventHandlers/EventDispatch.lua"),
                .embedInCode("Tasks/TaskEngine.lua"),
                .embedInCode("Tasks/RateLimiting.lua"),
                .embedInCode("Workers/WorkerWaits.lua"),
                .embedInCode("Collections/ListWalks.lua"),
                .embedInCode("Collections/ToolboxCommon.lua"),
                .embedInCode("Collections/ToolboxSorting.lua"),
                .embedInCode("Collections/ToolboxGrouping.lua"),
                .embedInCode("Collections/ToolboxSequences.lua"),
                .embedInCode("Collections/ToolboxAggregates.lua"),
                .embedInCode("Collections/ToolboxSetAlgebra.lua"),
                .embedInCode("Debugger/DebugAgent.lua"),
            ]
        ),
        // libxml2 from Debian's libxml2-dev (never vendored), for BlocksBridgeXML.
        .systemLibrary(
            name: "CLibXML2",
            path: "Sources/CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        // libbkxml.so: the XML rock's C parser (Sources/XMLModule, also compiled by its rockspec),
        // without the rock's Lua entry, so bklua, hosts and bk.so parse with the same code, and no
        // Foundation (Foundation's XMLParser crashes on some documents on Linux).
        .target(
            name: "BlocksBridgeXML",
            dependencies: ["CLibXML2"],
            path: "Sources/XMLModule",
            exclude: ["ModuleEntry.c"]
        ),
        // The `bk` product's own target (BlocksBridge, linked): its release build takes the Swift
        // runtime in statically, so the rock installs bk.so alone and it loads no Swift library (its
        // runtime's symbols stay hidden). Here, not on BlocksBridge: hosts linking BlocksBridge get
        // no unsafe flag.
        .target(
            name: "LuaModule",
            dependencies: ["BlocksBridge"],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // The compiler plugin expanding @LuaExport and its companion attributes.
        .macro(
            name: "BlocksBridgeMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // Declares the macros and re-exports BlocksBridge: `import BlocksBridgeExport`.
        .target(name: "BlocksBridgeExport", dependencies: ["BlocksBridge", "BlocksBridgeMacros"]),
        // bklua's line editor: Debian's libedit-dev (BSD editline), driven one key at a time. Not
        // linked: loaded (dlopen) when the prompt starts, so that `bklua -e`/script runs never load it.
        .target(name: "CEdit", dependencies: ["CLua"], path: "Sources/CEdit"),
        .executableTarget(
            name: "bklua",
            dependencies: ["BlocksBridge", "CLua", "CLuaShim", "CEdit"],
            // help(bk.map) at the prompt: docs/reference.md (linked here) compiled in;
            // `bklua --annotations`: library/bk.lua (linked as Resources/bk.lua).
            resources: [.embedInCode("reference.md"), .embedInCode("Resources/bk.lua")],
            // Start-up: the Swift runtime linked in, not loaded and bound symbol by symbol at every
            // start (bkbench's start-up benchmark). Release only, the build users run.
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "bkbench",
            dependencies: ["BlocksBridge", "BlocksBridgeExport", "CLua", "CLuaShim", "BenchFloor"],
            path: "Benchmarks/bkbench"
        ),
        // The bare Lua states of bkbench's debugger floor row (C: Lua's C API, which bkbench's Swift
        // does not call).
        .target(name: "BenchFloor", dependencies: ["CLua"], path: "Benchmarks/BenchFloor"),
        // An example host program: exposes a Swift object to a script (built and run by scripts/test).
        .executableTarget(
            name: "HostExample",
            dependencies: ["BlocksBridgeExport"],
            path: "examples/host",
            exclude: ["thermostat.lua"]
        ),
        .testTarget(
            name: "BlocksBridgeTests",
            dependencies: ["BlocksBridge", "CLua", "CLuaShim"],
            path: "Tests/BlocksBridgeTests"
        ),
        // Exported types through Lua: every kind of member, metamethod, enum and Codable value.
        .testTarget(
            name: "BlocksBridgeExportTests",
            dependencies: ["BlocksBridgeExport"],
            path: "Tests/BlocksBridgeExportTests"
        ),
        // The macros' expansions and diagnostics (swift-macro-testing).
        .testTarget(
            name: "BlocksBridgeMacrosTests",
            dependencies: [
                "BlocksBridgeMacros",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
            ],
            path: "Tests/BlocksBridgeMacrosTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
