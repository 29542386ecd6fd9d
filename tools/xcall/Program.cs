using XCall.Cli;

return await CommandLine.RunAsync(args).ConfigureAwait(false);
