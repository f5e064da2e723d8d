// The `bk` product's own target: bk.so is the bridge (`luaopen_bk` is in BlocksBridge's
// Host/LuaModuleEntry), linked here so that its release build can take the Swift runtime in
// statically (Package.swift) without changing how hosts link BlocksBridge. Nothing of its own.
import BlocksBridge
