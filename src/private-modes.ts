// A run's files hold whole conversations (answers marked sensitive included): only their owner may read them.
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
