// CSP.NET's AltReader and AddIntegers (listings 4-5): two processes send sums on "plus" and
// "minus"; the reader fair-selects between them and a timer, and a second without data ends it.

var plus = new One2One<int>();
var minus = new One2One<int>();
var reader = new AltReader(plus.In, minus.In);
await new Parallel(reader, new AddIntegers(100, plus.Out), new AddIntegers(100, minus.Out)).RunAsync();
Console.WriteLine($"result {reader.Result} (plus and minus sent the same sums)");

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

/// <summary>Listing 5: adds what comes on plus, subtracts what comes on minus, until a second of silence.</summary>
internal sealed class AltReader(ChannelIn<int> plus, ChannelIn<int> minus) : IProcess
{
    public int Result { get; private set; }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        var timer = new CSTimer();
        var alt = new Alternative(plus, minus, timer);
        int result = 0;
        bool done = false;
        while (!done)
        {
            timer.RelativeTimeout(1000);
            switch (await alt.FairSelectAsync(cancellationToken))
            {
                case 0:
                    result += await plus.ReadAsync(cancellationToken);
                    break;
                case 1:
                    result -= await minus.ReadAsync(cancellationToken);
                    break;
                case 2:
                    done = true;
                    break;
            }
        }
        Result = result;
    }
}
