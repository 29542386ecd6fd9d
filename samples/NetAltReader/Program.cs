// CSP.NET's AltReader and AddIntegers (listings 4-6) across processes: `xcall run -n 3 -- dotnet
// XCall.Samples.NetAltReader.dll` puts the reader in rank 0 and an AddIntegers in ranks 1 and 2, which reach the
// reader's named channels "plus" and "minus" over shared memory; `dotnet XCall.Samples.NetAltReader.dll` runs the
// same three processes in one OS process (stand-alone). The reader fair-selects between the two remote inputs and
// a timer; a second of silence after the first value ends it, and it poisons both channels so that a writer
// still waiting ends too.

await using CspWorld csp = await CspWorld.JoinAsync();
IEnumerable<int> roles = csp.IsStandAlone ? [0, 1, 2] : csp.Rank < 3 ? [csp.Rank] : [];
await new Parallel(roles.Select(Role)).RunAsync();
return 0;

Func<CancellationToken, Task> Role(int role) => role switch
{
    0 => async ct =>
    {
        One2One<int> plus = await csp.CreateOne2OneAsync<int>("plus", cancellationToken: ct);
        One2One<int> minus = await csp.CreateOne2OneAsync<int>("minus", cancellationToken: ct);
        var reader = new AltReader(plus.In, minus.In);
        await reader.RunAsync(ct);
        Poisoning.PoisonAll([plus.In, minus.In]);
        Console.WriteLine($"result {reader.Result} after {reader.Reads} values (plus and minus send the same sums)");
    },
    _ => async ct =>
    {
        IChannelOut<int> output = await csp.OpenOutAsync<int>(role == 1 ? "plus" : "minus", cancellationToken: ct);
        try
        {
            await new AddIntegers(100, output).RunAsync(ct);
        }
        catch (PoisonException)
        {
            Console.WriteLine($"AddIntegers {role}: the reader ended first");
        }
    },
};

/// <summary>Listing 4: sends the sum 1 + ... + (number - 1), a hundred times.</summary>
internal sealed class AddIntegers(int number, IChannelOut<int> result) : IProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int j = 0; j < 100; j++)
        {
            int sum = 0;
            for (int i = 1; i < number; i++)
            {
                sum += i;
            }
            await result.WriteAsync(sum, cancellationToken);
        }
    }
}

/// <summary>Listing 5: adds what comes on plus, subtracts what comes on minus, until a second of silence after the first value.</summary>
internal sealed class AltReader(ChannelIn<int> plus, ChannelIn<int> minus) : IProcess
{
    public int Result { get; private set; }

    public int Reads { get; private set; }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        var timer = new CSTimer();
        var alt = new Alternative(plus, minus, timer);
        // Processes of other OS processes may start late: the timer guards only once a value came.
        bool[] ready = [true, true, false];
        while (true)
        {
            timer.RelativeTimeout(1000);
            switch (await alt.FairSelectAsync(ready, cancellationToken))
            {
                case 0:
                    Result += await plus.ReadAsync(cancellationToken);
                    break;
                case 1:
                    Result -= await minus.ReadAsync(cancellationToken);
                    break;
                default:
                    return;
            }
            Reads++;
            ready[2] = true;
        }
    }
}
