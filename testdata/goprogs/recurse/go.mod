module gprobetest/recurse

go 1.21
