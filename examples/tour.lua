-- A tour of BlocksBridge: BlocksKit's block helpers for Lua 5.4, implemented in Swift.
-- Run it with: scripts/bklua examples/tour.lua
-- Each section shows one family; it grows as the bridge does.

local bk = require "bk"
print("BlocksBridge " .. bk.version() .. " on " .. _VERSION)

-- 1. The module: every bk.NAME is also the global bk_NAME in bklua.
print("require 'bk' is the bk global:", require("bk") == bk)
print("bk_version is bk.version:", bk_version == bk.version)

-- 2. Mistakes give Lua's standard messages, never a crash.
local ok, err = pcall(bk.installGlobals, 42)
print("bad argument ->", err)

-- 3. The helpers can be installed into any environment, e.g. a sandbox for a plugin.
local env = bk.installGlobals({ print = print })
print("installed into a plugin environment:", env.bk_version ~= nil)

-- Dynamic delegates: a protocol, a "class" whose delegate property is dynamic, and block properties.
local AlertDelegate = bk.protocol("TourAlertViewDelegate", {
  ["alertView:clickedButtonAtIndex:"] = {},
  alertViewShouldEnableFirstOtherButton = { returns = true, combine = "and" },
})
local Alert = {}
Alert.__index = Alert
function Alert.new(title) return setmetatable({ title = title }, Alert) end
function Alert:click(i) return self.delegate:alertViewClickedButtonAtIndex(self, i) end
bk.registerDynamicDelegate(Alert, AlertDelegate)
bk.linkDelegateMethods(Alert, { bk_clickedBlock = "alertView:clickedButtonAtIndex:" })
local alert = Alert.new("Save?")
alert.bk_clickedBlock = function(a, i) return a.title .. " -> button " .. i end
print("dynamic delegate:", alert:click(1))
local logger = { alertViewClickedButtonAtIndex = function(self, a, i) print("  real delegate saw", i) end }
alert.delegate = logger      -- the real delegate (held weakly: keep `logger`)
print("both run:", alert:click(2))

-- Foundation's XMLParser, driven by blocks on its dynamic delegate.
local parser = bk.XMLParser([[<menu><item price="3">tea</item><item price="4">cake</item></menu>]])
local total = 0
parser.delegate:implementMethod("parser:didStartElement:namespaceURI:qualifiedName:attributes:",
  function(p, name, uri, qname, attributes) total = total + (tonumber(attributes.price) or 0) end)
print("XMLParser parsed:", parser:parse(), "total price", total)

-- Event handlers on any table.
local button = {}
bk.addEventHandler(button, function(sender, x) print("tapped with", x) end, { "touchUpInside", "touchDown" })
bk.sendActionsForControlEvents(button, "touchUpInside", 42)
