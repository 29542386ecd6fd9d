namespace XCall.Cli;

/// <summary>What <c>xcall worker</c> was asked to serve.</summary>
/// <param name="Assembly">The program's assembly, whose <c>[assembly: XCallWorker]</c> names what the worker serves.</param>
/// <param name="Pool">The pool it joins, or null for the default one.</param>
/// <param name="Slots">How many processes it runs at once.</param>
/// <param name="Listen">An extra address it answers at (for programs on other machines), or null.</param>
internal sealed record WorkerSettings(string Assembly, string? Pool, int Slots, string? Listen);
