// A worker service whose role comes from appsettings.json alone: an "XCall:Server" section serves IGreeter,
// an "XCall:Clients:IGreeter" section runs GreetingWorker against it (see appsettings.server.json and
// appsettings.client.json; copy one to appsettings.json beside the program, or run from a folder holding it).
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using XCall.Hosting;
using XCall.Samples.WorkerService;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
if (builder.Configuration.GetSection(XCallServiceCollectionExtensions.ServerSection).Exists())
{
    builder.Services.AddSingleton<Greeter>();
    builder.Services.AddXCallServer((services, server) => server.Add<IGreeter>(services.GetRequiredService<Greeter>()));
}
if (builder.Configuration.GetSection($"{XCallServiceCollectionExtensions.ClientsSection}:{nameof(IGreeter)}").Exists())
{
    builder.Services.AddXCallClient<IGreeter>();
    builder.Services.AddHostedService<GreetingWorker>();
}
builder.Build().Run();
