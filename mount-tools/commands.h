// The subcommands of the bucketfs binary. main.cc only dispatches; each
// command lives in its own file and parses its own flags (argv[0] is the
// subcommand name, e.g. "s3" or "mount").
#pragma once

namespace bucketfs::tools {

// bucketfs s3 ls|get|put|rm|bench ...   (s3_command.cc)
int RunS3Command(int argc, char** argv);

// bucketfs cleanup s3://BUCKET[/PREFIX] [--older-than S] [--dry-run]   (cleanup_command.cc)
int RunCleanupCommand(int argc, char** argv);

// bucketfs warm PATH [--data] [--threads N]   (warm_command.cc)
int RunWarmCommand(int argc, char** argv);

// bucketfs sync DIR...   (sync_command.cc)
int RunSyncCommand(int argc, char** argv);

// bucketfs status [--once] [MOUNTPOINT]   (status_command.cc)
int RunStatusCommand(int argc, char** argv);

// bucketfs upgrade MOUNTPOINT   (upgrade_command.cc)
int RunUpgradeCommand(int argc, char** argv);

// bucketfs s3://BUCKET[/PREFIX] MOUNTPOINT [options]   (mount_command.cc)
int RunMountCommand(int argc, char** argv);

}  // namespace bucketfs::tools
