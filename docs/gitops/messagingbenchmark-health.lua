-- Argo CD health check of a msgbench.io/MessagingBenchmark (docs/gitops.md).
-- A run in progress is Progressing. Succeeded is Healthy unless its ObjectivesMet condition is
-- False: the run measured correctly and missed its objectives, which is Degraded. Failed is
-- Degraded with the operator's message.
local hs = {}
local status = obj.status
if status == nil or status.phase == nil or status.phase == "" then
  hs.status = "Progressing"
  hs.message = "waiting for the msgbench operator"
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "waiting for the msgbench operator to observe generation " .. generation
  return hs
end
local phase = status.phase
local message = status.message
if message == nil then
  message = ""
end
if phase == "Pending" or phase == "Provisioning" or phase == "Starting" or phase == "Running" or phase == "Collecting" then
  hs.status = "Progressing"
  if message ~= "" then
    hs.message = phase .. ": " .. message
  else
    hs.message = phase
  end
  return hs
end
if phase == "Succeeded" then
  local objectives = nil
  if status.conditions ~= nil then
    for _, c in ipairs(status.conditions) do
      if c.type == "ObjectivesMet" then
        objectives = c
      end
    end
  end
  if objectives ~= nil and objectives.status == "False" then
    hs.status = "Degraded"
    hs.message = "objectives missed: " .. (objectives.message or "")
    return hs
  end
  hs.status = "Healthy"
  if objectives ~= nil and objectives.status == "True" and objectives.message ~= nil and objectives.message ~= "" then
    hs.message = "Succeeded, objectives met: " .. objectives.message
  else
    hs.message = "Succeeded"
  end
  return hs
end
if phase == "Failed" then
  hs.status = "Degraded"
  if message ~= "" then
    hs.message = message
  else
    hs.message = "Failed"
  end
  return hs
end
hs.status = "Unknown"
hs.message = "unknown phase " .. phase
return hs
