package server

type Server struct {
	addr string
}

func (s *Server) Addr() string {
	return s.addr
}

func New(addr string) *Server {
	return &Server{addr: addr}
}
