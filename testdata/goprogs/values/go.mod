module gprobetest/values

go 1.21
