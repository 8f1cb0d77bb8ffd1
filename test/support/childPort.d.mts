/** A port free now on 127.0.0.1, below the OS's ephemeral range, for another process to bind later. */
export function childPort(): Promise<number>;
