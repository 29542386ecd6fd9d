namespace XCall.Cli;

/// <summary>What <c>xcall run</c> was asked to start.</summary>
/// <param name="Ranks">How many ranks.</param>
/// <param name="Program">The program each rank runs.</param>
/// <param name="Arguments">Its arguments.</param>
/// <param name="Store">Rank 0's store address, or null to pick a free loopback port.</param>
/// <param name="JobId">The job id.</param>
internal sealed record RunSettings(int Ranks, string Program, string[] Arguments, string? Store, string JobId);
