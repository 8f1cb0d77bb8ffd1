/** A port free now on 127.0.0.1, below the OS's ephemeral range: no `listen(0)` is handed it. */
export function childPort(): Promise<number>;
